/// One reading of a round-trip latency measurement.
///
/// `measuredFrames` is the delay from the session's output port to its input
/// port through the path under test, in JACK frames, with sub-sample
/// resolution; `reportedFrames` is what JACK's latency ranges say for the same
/// path (the session's capture latency plus its playback latency, including
/// any stored calibration); `excessFrames` the difference. An invalid reading
/// carries its `problem` and no numbers. A reading whose reported latency was
/// not known, or changed while the window was captured, keeps its measured
/// delay but carries `reportedProblem` and no reported or excess numbers:
/// never a 0 in their place.
public struct LatencyReading: Sendable, Equatable, Encodable {
    /// 1 for the first reading of a meter, counting invalid ones.
    public var index: Int
    /// Whether the numbers can be trusted.
    public var valid: Bool
    /// Why not, when not valid.
    public var problem: LatencyProblem?
    /// Measured round trip, frames.
    public var measuredFrames: Double?
    /// Measured round trip, milliseconds.
    public var measuredMs: Double?
    /// What JACK reports for the path, frames: capture plus playback (nil: not known).
    public var reportedFrames: Int?
    /// JACK's capture latency of the session's input (the capture side), frames.
    public var reportedCaptureFrames: Int?
    /// JACK's playback latency of the session's output (the playback side), frames.
    public var reportedPlaybackFrames: Int?
    /// Why there is no reported latency to compare with, when there is none.
    public var reportedProblem: ReportedLatencyProblem?
    /// Whether JACK held the reported ranges for the session's own ports
    /// too (see `ReportedLatency.settled`): false on a path whose output
    /// comes back through jackd's `-L` loopback, where jackd runs no latency
    /// callback for the session.
    public var reportedSettled: Bool
    /// Measured minus reported, frames.
    public var excessFrames: Double?
    /// The path inverts the signal.
    public var inverted: Bool
    /// Level of the weakest tone as received, dBFS.
    public var weakestToneDBFS: Double
    /// Largest minus smallest delay among the tones, frames.
    public var toneSpreadFrames: Double?
    /// The server's sample rate during the reading, Hz.
    public var sampleRate: Int
    /// The server's period during the reading, frames.
    public var periodFrames: Int
    /// JACK frame time of the window's first captured frame.
    public var windowStartFrame: UInt32

    /// A sentence for a person.
    public var message: String {
        switch problem {
        case .signalTooWeak?:
            return String(format: "no reading: the test signal came back at %.1f dBFS, more than 40 dB below what was sent "
                          + "(is the input connected to the output through the loopback?)", weakestToneDBFS)
        case .tooNoisy?:
            return "no reading: less than half of what came back is the test signal (noise, or another signal on the path)"
        case .unstable?:
            return "no reading: the tones disagree about the delay (the path changed during the window, or it is not linear)"
        case .xrun?:
            return "no reading: an xrun or a gap in the captured frames fell in the window"
        case .dropout?:
            return "no reading: the signal stopped inside the window (a period lost on the way without an xrun)"
        case nil:
            return "valid"
        }
    }

    /// Why the reported latency is missing from a reading, for a person.
    public var reportedMessage: String? {
        switch reportedProblem {
        case .unknown?:
            "JACK's latency for the path was not known (a port of the session unconnected, or the session inactive)"
        case .changed?:
            "JACK's latency for the path changed while the window was captured (a reconnection, a period change, or JACK "
                + "still settling): no excess is computed from it"
        case nil:
            nil
        }
    }

    private enum Keys: String, CodingKey {
        case index, valid, problem, message, measuredFrames, measuredMs, reportedFrames, reportedCaptureFrames
        case reportedPlaybackFrames, reportedProblem, reportedMessage, reportedSettled, excessFrames, inverted
        case weakestToneDbfs, toneSpreadFrames, sampleRate, periodFrames, windowStartFrame
    }

    /// Every key is always present (null when there is no number), so a
    /// program reading JSON Lines sees the same shape on every line.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(index, forKey: .index)
        try container.encode(valid, forKey: .valid)
        try container.encode(problem, forKey: .problem)
        try container.encode(valid ? nil : message, forKey: .message)
        try container.encode(measuredFrames, forKey: .measuredFrames)
        try container.encode(measuredMs, forKey: .measuredMs)
        try container.encode(reportedFrames, forKey: .reportedFrames)
        try container.encode(reportedCaptureFrames, forKey: .reportedCaptureFrames)
        try container.encode(reportedPlaybackFrames, forKey: .reportedPlaybackFrames)
        try container.encode(reportedProblem, forKey: .reportedProblem)
        try container.encode(reportedMessage, forKey: .reportedMessage)
        try container.encode(reportedSettled, forKey: .reportedSettled)
        try container.encode(excessFrames, forKey: .excessFrames)
        try container.encode(inverted, forKey: .inverted)
        try container.encode(weakestToneDBFS.isFinite ? weakestToneDBFS : nil, forKey: .weakestToneDbfs)
        try container.encode(toneSpreadFrames, forKey: .toneSpreadFrames)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(periodFrames, forKey: .periodFrames)
        try container.encode(windowStartFrame, forKey: .windowStartFrame)
    }
}

/// Why a latency reading has no reported latency to compare its measurement with.
public enum ReportedLatencyProblem: String, Sendable, Codable, Equatable {
    /// JACK's latency for a side of the path could not be read.
    case unknown
    /// It was not the same at the window's end as at its start.
    case changed
}

/// What a latency meter tells of its session besides readings.
public enum LatencyMeterNotice: Sendable, Equatable, Encodable {
    /// Another session took the audio (its JACK client name): no readings until it ends.
    case interrupted(by: String)
    /// Activating again after the interruption was refused (a call still holds the audio); retried every half second.
    case resumeRefused(reason: String)
    /// Measuring again, after this many attempts to activate.
    case resumed(attempts: Int)

    /// A sentence for a person.
    public var message: String {
        switch self {
        case let .interrupted(client): "interrupted by '\(client)', which took the audio; measuring again when it ends"
        case let .resumeRefused(reason): "cannot measure again yet: \(reason); trying every 0.5 s"
        case let .resumed(attempts): "the interruption ended: measuring again" + (attempts > 1 ? " (after \(attempts) attempts)" : "")
        }
    }

    private enum Keys: String, CodingKey { case event, by, reason, attempts, message }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        switch self {
        case let .interrupted(client):
            try container.encode("interrupted", forKey: .event)
            try container.encode(client, forKey: .by)
        case let .resumeRefused(reason):
            try container.encode("resume_refused", forKey: .event)
            try container.encode(reason, forKey: .reason)
        case let .resumed(attempts):
            try container.encode("resumed", forKey: .event)
            try container.encode(attempts, forKey: .attempts)
        }
        try container.encode(message, forKey: .message)
    }
}
