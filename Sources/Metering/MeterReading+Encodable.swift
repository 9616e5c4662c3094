import EventSchema

/// The readings as lines of the schema: levels to 0.01 dB, and `null` for a
/// level below anything measurable (−∞) or a loudness below the gate.
extension ChannelReading: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(channel, forKey: "channel")
        try json.encode(source, forKey: "source")
        try json.encodeFigure(samplePeakDBFS, forKey: "sample_peak_dbfs")
        try json.encodeFigure(truePeakDBTP, forKey: "true_peak_dbtp")
        try json.encodeFigure(rmsDBFS, forKey: "rms_dbfs")
        try json.encodeFigure(ppmTypeIDBFS, forKey: "ppm_type_i_dbfs")
        try json.encodeFigure(ppmTypeIIbDBFS, forKey: "ppm_type_iib_dbfs")
        try json.encodeFigure(vu, forKey: "vu")
        try json.encodeFigure(kMeter, forKey: "k_meter")
    }
}

extension MeterReading: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode("reading", forKey: "event")
        try json.encode(seconds, forKey: "seconds")
        try json.encodeFigure(momentaryLUFS, forKey: "momentary_lufs")
        try json.encodeFigure(shortTermLUFS, forKey: "short_term_lufs")
        try json.encodeFigure(integratedLUFS, forKey: "integrated_lufs")
        try json.encodeFigure(loudnessRangeLU, forKey: "lra_lu")
        try json.encode(channels, forKey: "channels")
    }
}

extension MeterSummary: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode("summary", forKey: "event")
        try json.encode(seconds, forKey: "seconds")
        try json.encode(programmeSeconds, forKey: "programme_seconds")
        try json.encode(sampleRate, forKey: "sample_rate")
        try json.encode(layout, forKey: "layout")
        try json.encodeFigure(integratedLUFS, forKey: "integrated_lufs")
        try json.encodeFigure(lraLU, forKey: "lra_lu")
        try json.encodeFigure(truePeakDBTP, forKey: "true_peak_dbtp")
        try json.encodeFigure(samplePeakDBFS, forKey: "sample_peak_dbfs")
        try json.encodeFigure(maxMomentaryLUFS, forKey: "max_momentary_lufs")
        try json.encodeFigure(maxShortTermLUFS, forKey: "max_short_term_lufs")
        try json.encode(channels, forKey: "channels")
        try json.encode(xruns, forKey: "xruns")
    }
}

/// What the meter says besides its readings: dead air and its end, metered
/// ports that went or came back, a reset, pause or resume of the
/// programme's loudness, and a warning that a figure is less than the whole truth.
public enum MeterEvent: Sendable, Equatable, Encodable {
    /// Dead air on `channels` (or its end): the highest level, where (seconds of
    /// audio) and how long the silence is so far (or was).
    case silence(channels: [Int], levelDBFS: Double, seconds: Double, silentSeconds: Double)
    /// The end of dead air on `channels`: signal again, with the silence's length.
    case signal(channels: [Int], levelDBFS: Double, seconds: Double, silentSeconds: Double)
    /// Metered ports went away (`awaySeconds` nil) or their absence ended
    /// (`returned`: they came back; false: the meter stopped first).
    case source(ports: [String], seconds: Double, awaySeconds: Double?, returned: Bool)
    /// The programme's integrated loudness and LRA start again, pause or resume.
    case programme(ProgrammeChange, seconds: Double)
    /// Something the meter could not do, in words.
    case warning(message: String)
    /// A compliance alarm starts or ends (`LoudnessAlarm`), judged against `target`.
    case loudnessAlarm(LoudnessAlarm.Change, target: LoudnessTarget)

    /// What happened to the programme's integrated loudness and range.
    public enum ProgrammeChange: String, Sendable {
        /// Started again from now, paused, or resumed (the event names).
        case reset = "loudness_reset", paused = "loudness_paused", resumed = "loudness_resumed"
    }

    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        switch self {
        case let .silence(channels, level, seconds, silent), let .signal(channels, level, seconds, silent):
            try json.encode(self.isSilence ? "silence" : "signal", forKey: "event")
            try json.encode(channels, forKey: "channels")
            try json.encodeFigure(level, forKey: "level_dbfs")
            try json.encode(seconds, forKey: "seconds")
            try json.encode(silent, forKey: "silent_seconds")
        case let .source(ports, seconds, away, returned):
            try json.encode(away == nil ? "source_lost" : "source_back", forKey: "event")
            try json.encode(ports, forKey: "ports")
            try json.encode(seconds, forKey: "seconds")
            if let away {
                try json.encode(away, forKey: "away_seconds")
                try json.encode(returned, forKey: "returned")
            }
        case let .programme(change, seconds):
            try json.encode(change.rawValue, forKey: "event")
            try json.encode(seconds, forKey: "seconds")
        case let .warning(message):
            try json.encode("warning", forKey: "event")
            try json.encode(message, forKey: "message")
        case let .loudnessAlarm(change, target):
            try json.encode(change.on ? "loudness_alarm" : "loudness_alarm_end", forKey: "event")
            try json.encode(change.kind.rawValue, forKey: "alarm")
            try json.encode(change.seconds, forKey: "seconds")
            try json.encode(change.sinceSeconds, forKey: "since_seconds")
            if let lasted = change.lastedSeconds { try json.encode(lasted, forKey: "lasted_seconds") }
            let unit = change.kind == .truePeakOver ? "dbtp" : "lufs"
            try json.encodeFigure(change.level, forKey: EventKey(stringValue: "level_" + unit))
            try json.encodeFigure(change.threshold, forKey: EventKey(stringValue: "threshold_" + unit))
            try json.encode(target.name, forKey: "target")
            try json.encodeFigure(target.targetLUFS, forKey: "target_lufs")
            try json.encodeFigure(target.toleranceLU, forKey: "tolerance_lu")
            try json.encodeFigure(target.maxTruePeakDBTP, forKey: "max_true_peak_dbtp")
        }
    }

    private var isSilence: Bool { if case .silence = self { true } else { false } }
}
