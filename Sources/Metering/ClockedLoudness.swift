import EventSchema
import Foundation

/// A meter's readings gathered on the clock's boundaries: an `interval`
/// line every `intervalSeconds` of the wall clock (on :00, :01, ... for
/// 1 s; on the minute for 1 min), with the highest momentary and
/// short-term loudness and the highest true and sample peak of that
/// interval; an `hour` line at the end of each clock hour and a `day` line
/// at each midnight, with that hour's or day's integrated loudness and
/// loudness range; a `gap` line for clock time no reading fell in (the
/// server was gone). Boundaries are in `timeZone` (hours and days as its
/// clocks show them); times are UTC to the millisecond.
///
/// Pure: each reading comes with the UTC time it was made at (the caller's
/// clock), and the lines it completes are returned.
public struct ClockedLoudness: Sendable {
    /// Length of an interval line, seconds of clock time.
    public let intervalSeconds: Double
    /// The time zone whose clocks place the hour and day boundaries.
    public let timeZone: TimeZone
    /// Seconds of audio each reading covers.
    public let readingSeconds: Double

    /// What is gathered for one stretch of the clock (an interval, an hour, a day).
    struct Stretch: Sendable {
        var from: Double
        var to: Double
        var readings = 0
        var maxMomentary: Double?
        var maxShortTerm: Double?
        var truePeak = -Double.infinity
        var samplePeak = -Double.infinity
        var histogram: LoudnessHistogram?

        init(from: Double, to: Double, keepsHistogram: Bool) {
            self.from = from
            self.to = to
            histogram = keepsHistogram ? LoudnessHistogram() : nil
        }

        mutating func add(_ reading: MeterReading, readingSeconds: Double) {
            readings += 1
            if let momentary = reading.momentaryLUFS, momentary.isFinite { maxMomentary = max(maxMomentary ?? -.infinity, momentary) }
            if let shortTerm = reading.shortTermLUFS, shortTerm.isFinite { maxShortTerm = max(maxShortTerm ?? -.infinity, shortTerm) }
            truePeak = max(truePeak, reading.channels.map(\.truePeakDBTP).max() ?? -.infinity)
            samplePeak = max(samplePeak, reading.channels.map(\.samplePeakDBFS).max() ?? -.infinity)
            // The loudness range's windows: whole 3 s windows, one per second of audio.
            let wholeSecond = abs(reading.seconds - reading.seconds.rounded()) < readingSeconds / 2 - 1e-9
                || readingSeconds >= 1
            let window = wholeSecond && reading.seconds >= 3 - 1e-9 ? reading.shortTermLUFS : nil
            histogram?.add(momentaryLUFS: reading.momentaryLUFS, shortTermLUFS: window)
        }
    }

    private var interval: Stretch?
    private var hour: Stretch?
    private var day: Stretch?
    private var last: MeterReading?
    /// Where the programme's figures start (audio seconds; a reset moves it).
    private var programmeStart = 0.0
    private var paused = false
    /// Tech 3342: a loudness range over less than this is not yet settled.
    public static let settlingSeconds = 60.0

    /// A log of `intervalSeconds` lines, with hours and days as `timeZone` shows them, from readings of `readingSeconds` each.
    public init(intervalSeconds: Double, timeZone: TimeZone = .current, readingSeconds: Double = 0.1) {
        self.intervalSeconds = intervalSeconds
        self.timeZone = timeZone
        self.readingSeconds = readingSeconds
    }

    /// Whether `seconds` can be an interval on the clock's boundaries: it divides a day.
    public static func dividesADay(_ seconds: Double) -> Bool {
        let millis = (seconds * 1000).rounded()
        return abs(millis - seconds * 1000) < 1e-6 && millis >= 1 && 86_400_000.truncatingRemainder(dividingBy: millis) == 0
    }

    /// The boundary of a stretch of `length` seconds (dividing a day) at or before `utc`, in the zone.
    func start(of utc: Double, length: Double) -> Double {
        let local = utc + Double(offset(utc))
        let boundary = (local / length).rounded(.down) * length
        // The boundary's own offset: a day that began before a daylight-saving change.
        return boundary - Double(offset(boundary - Double(offset(utc))))
    }

    /// The next boundary after `from` (an hour or a day, as the zone's clocks
    /// show them: a day is 23 or 25 hours long at a daylight-saving change).
    func end(of from: Double, length: Double) -> Double {
        let next = start(of: from + length * 1.5, length: length)
        return next > from ? next : from + length
    }

    /// Takes a reading made at `utc`; returns the lines it completed.
    public mutating func add(_ reading: MeterReading, at utc: Double) -> [LoudnessLogLine] {
        // The reading's audio ends as it is made: it counts where its middle falls.
        let moment = utc - readingSeconds / 2
        var lines: [LoudnessLogLine] = []
        if let current = interval, moment >= current.to {
            lines += closeInterval()
            let next = start(of: moment, length: intervalSeconds)
            if next > current.to + 1e-6 { lines.append(.gap(from: current.to, to: next, utcOffset: offset(current.to))) }
        }
        for (length, keep) in [(3600.0, \ClockedLoudness.hour), (86_400.0, \ClockedLoudness.day)] {
            if let current = self[keyPath: keep], moment >= current.to {
                lines.append(periodLine(current, kind: length == 3600 ? .hour : .day))
                self[keyPath: keep] = nil
            }
            if self[keyPath: keep] == nil {
                let from = start(of: moment, length: length)
                self[keyPath: keep] = Stretch(from: from, to: end(of: from, length: length), keepsHistogram: true)
            }
            let seconds = readingSeconds
            self[keyPath: keep]?.add(reading, readingSeconds: seconds)
        }
        if interval == nil {
            let from = start(of: moment, length: intervalSeconds)
            interval = Stretch(from: from, to: from + intervalSeconds, keepsHistogram: false)
        }
        let seconds = readingSeconds
        interval?.add(reading, readingSeconds: seconds)
        last = reading
        return lines
    }

    /// The programme's figures start again (a reset) or pause.
    public mutating func note(_ change: MeterEvent.ProgrammeChange, seconds: Double) {
        switch change {
        case .reset: programmeStart = seconds
        case .paused: paused = true
        case .resumed: paused = false
        }
    }

    /// What is under way when the meter stops: its interval, hour and day, marked partial.
    public mutating func finish() -> [LoudnessLogLine] {
        var lines = closeInterval(partial: true)
        if let hour { lines.append(periodLine(hour, kind: .hour, partial: true)) }
        if let day { lines.append(periodLine(day, kind: .day, partial: true)) }
        hour = nil
        day = nil
        return lines
    }

    /// The hour's integrated loudness and range so far.
    public var runningHour: (integratedLUFS: Double?, loudnessRangeLU: Double?) {
        (hour?.histogram?.integratedLUFS, hour?.histogram?.loudnessRangeLU)
    }
    /// The day's integrated loudness and range so far.
    public var runningDay: (integratedLUFS: Double?, loudnessRangeLU: Double?) {
        (day?.histogram?.integratedLUFS, day?.histogram?.loudnessRangeLU)
    }

    private func offset(_ utc: Double) -> Int { timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: utc)) }

    private mutating func closeInterval(partial: Bool = false) -> [LoudnessLogLine] {
        guard let current = interval, let last else { return [] }
        interval = nil
        let hourNow = hour?.histogram, dayNow = day?.histogram
        let programmeSeconds = last.seconds - programmeStart
        return [.interval(LoudnessLogLine.Interval(
            from: current.from, to: current.to, utcOffset: offset(current.from), partial: partial, readings: current.readings,
            audioSeconds: last.seconds, maxMomentaryLUFS: current.maxMomentary, maxShortTermLUFS: current.maxShortTerm,
            shortTermLUFS: last.shortTermLUFS, truePeakDBTP: current.truePeak, samplePeakDBFS: current.samplePeak,
            integratedLUFS: last.integratedLUFS, loudnessRangeLU: last.loudnessRangeLU,
            loudnessRangeSettled: programmeSeconds >= Self.settlingSeconds, paused: paused,
            hourIntegratedLUFS: hourNow?.integratedLUFS, hourLoudnessRangeLU: hourNow?.loudnessRangeLU,
            dayIntegratedLUFS: dayNow?.integratedLUFS, dayLoudnessRangeLU: dayNow?.loudnessRangeLU))]
    }

    private func periodLine(_ stretch: Stretch, kind: LoudnessLogLine.Period.Kind, partial: Bool = false) -> LoudnessLogLine {
        let metered = Double(stretch.readings) * readingSeconds
        return .period(LoudnessLogLine.Period(
            kind: kind, from: stretch.from, to: stretch.to, utcOffset: offset(stretch.from), partial: partial,
            meteredSeconds: metered, integratedLUFS: stretch.histogram?.integratedLUFS,
            loudnessRangeLU: stretch.histogram?.loudnessRangeLU, loudnessRangeSettled: metered >= Self.settlingSeconds,
            maxMomentaryLUFS: stretch.maxMomentary, maxShortTermLUFS: stretch.maxShortTerm,
            truePeakDBTP: stretch.truePeak, samplePeakDBFS: stretch.samplePeak))
    }
}

/// A line of the compliance log (`jas meter --log`), as `ClockedLoudness` makes them.
public enum LoudnessLogLine: Sendable, Encodable {
    /// An interval's line: its figures and the hour's and day's so far.
    case interval(Interval)
    /// A closed hour or day: its figures.
    case period(Period)
    /// Clock time no reading fell in (the server was gone, the meter stalled).
    case gap(from: Double, to: Double, utcOffset: Int)

    /// An interval's figures.
    public struct Interval: Sendable {
        /// Where the interval starts and ends, UTC seconds since 1970.
        public var from, to: Double
        /// The time zone's offset from UTC at the interval, seconds.
        public var utcOffset: Int
        /// True when readings cover only part of the interval (the meter started or stopped inside it).
        public var partial: Bool
        /// Readings that fell in the interval.
        public var readings: Int
        /// Seconds of audio those readings cover.
        public var audioSeconds: Double
        /// Highest momentary and short-term loudness in the interval, and the short-term at its end, LUFS (nil: below the gate).
        public var maxMomentaryLUFS, maxShortTermLUFS, shortTermLUFS: Double?
        /// Highest true peak (dBTP) and sample peak (dBFS) in the interval.
        public var truePeakDBTP, samplePeakDBFS: Double
        /// The programme's integrated loudness (LUFS) and loudness range (LU) at the interval's end.
        public var integratedLUFS, loudnessRangeLU: Double?
        /// True once the loudness range covers `ClockedLoudness.settlingSeconds`.
        public var loudnessRangeSettled: Bool
        /// True when the programme's figures were paused at the interval's end.
        public var paused: Bool
        /// The running hour's and day's integrated loudness (LUFS) and range (LU).
        public var hourIntegratedLUFS, hourLoudnessRangeLU, dayIntegratedLUFS, dayLoudnessRangeLU: Double?
    }

    /// A closed hour's or day's figures.
    public struct Period: Sendable {
        /// An hour or a day of the time zone's clocks.
        public enum Kind: String, Sendable {
            /// An hour of the time zone's clocks.
            case hour
            /// A day of the time zone's clocks, midnight to midnight.
            case day
        }
        /// Whether the period is an hour or a day.
        public var kind: Kind
        /// Where the period starts and ends, UTC seconds since 1970.
        public var from, to: Double
        /// The time zone's offset from UTC at the period's start, seconds.
        public var utcOffset: Int
        /// True when the meter ran for only part of the period.
        public var partial: Bool
        /// Seconds of audio metered in the period.
        public var meteredSeconds: Double
        /// The period's integrated loudness (LUFS) and loudness range (LU).
        public var integratedLUFS, loudnessRangeLU: Double?
        /// True once the loudness range covers `ClockedLoudness.settlingSeconds`.
        public var loudnessRangeSettled: Bool
        /// Highest momentary and short-term loudness in the period, LUFS.
        public var maxMomentaryLUFS, maxShortTermLUFS: Double?
        /// Highest true peak (dBTP) and sample peak (dBFS) in the period.
        public var truePeakDBTP, samplePeakDBFS: Double
    }

    /// UTC as ISO 8601 with milliseconds.
    public static func iso(_ utc: Double) -> String {
        let millis = Int64((utc * 1000).rounded())
        var seconds = time_t(millis / 1000)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", fields.tm_year + 1900, fields.tm_mon + 1, fields.tm_mday,
                      fields.tm_hour, fields.tm_min, fields.tm_sec, Int(millis % 1000))
    }

    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        switch self {
        case let .interval(line):
            try json.encode("interval", forKey: "event")
            try Self.span(&json, line.from, line.to, line.utcOffset, line.partial)
            try json.encode(line.readings, forKey: "readings")
            try json.encode(Figure.rounded(line.audioSeconds, decimals: 3), forKey: "audio_seconds")
            try json.encodeFigure(line.maxMomentaryLUFS, forKey: "max_momentary_lufs")
            try json.encodeFigure(line.maxShortTermLUFS, forKey: "max_short_term_lufs")
            try json.encodeFigure(line.shortTermLUFS, forKey: "short_term_lufs")
            try json.encodeFigure(line.truePeakDBTP, forKey: "true_peak_dbtp")
            try json.encodeFigure(line.samplePeakDBFS, forKey: "sample_peak_dbfs")
            try json.encodeFigure(line.integratedLUFS, forKey: "integrated_lufs")
            try json.encodeFigure(line.loudnessRangeLU, forKey: "lra_lu")
            try json.encode(line.loudnessRangeSettled, forKey: "lra_settled")
            try json.encode(line.paused, forKey: "paused")
            try json.encodeFigure(line.hourIntegratedLUFS, forKey: "hour_integrated_lufs")
            try json.encodeFigure(line.hourLoudnessRangeLU, forKey: "hour_lra_lu")
            try json.encodeFigure(line.dayIntegratedLUFS, forKey: "day_integrated_lufs")
            try json.encodeFigure(line.dayLoudnessRangeLU, forKey: "day_lra_lu")
        case let .period(line):
            try json.encode(line.kind.rawValue, forKey: "event")
            try Self.span(&json, line.from, line.to, line.utcOffset, line.partial)
            try json.encode(Figure.rounded(line.meteredSeconds, decimals: 1), forKey: "metered_seconds")
            try json.encodeFigure(line.integratedLUFS, forKey: "integrated_lufs")
            try json.encodeFigure(line.loudnessRangeLU, forKey: "lra_lu")
            try json.encode(line.loudnessRangeSettled, forKey: "lra_settled")
            try json.encodeFigure(line.maxMomentaryLUFS, forKey: "max_momentary_lufs")
            try json.encodeFigure(line.maxShortTermLUFS, forKey: "max_short_term_lufs")
            try json.encodeFigure(line.truePeakDBTP, forKey: "true_peak_dbtp")
            try json.encodeFigure(line.samplePeakDBFS, forKey: "sample_peak_dbfs")
        case let .gap(from, to, offset):
            try json.encode("gap", forKey: "event")
            try Self.span(&json, from, to, offset, false)
        }
    }

    private static func span(_ json: inout KeyedEncodingContainer<EventKey>, _ from: Double, _ to: Double, _ offset: Int,
                             _ partial: Bool) throws {
        try json.encode(iso(from), forKey: "from")
        try json.encode(iso(to), forKey: "to")
        try json.encode(offset, forKey: "utc_offset")
        if partial { try json.encode(true, forKey: "partial") }
    }
}
