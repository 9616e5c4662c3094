import Foundation
import Metering

/// What a compliance report shows, read from the records jas keeps: the
/// compliance logs of `jas meter --log` (a point per interval, the hours'
/// and days' figures, alarms, silences, gaps and the server's loss) and the
/// manifests of `jas record` (a point per file with its loudness, the gaps
/// in its files and the time no file covers). Times are UTC seconds.
public struct ComplianceRecord: Sendable {
    /// One interval of a log, or one file of a take.
    public struct Point: Sendable, Equatable {
        public var from, to: Double
        public var maxMomentaryLUFS, maxShortTermLUFS, shortTermLUFS, integratedLUFS: Double?
        public var truePeakDBTP, samplePeakDBFS: Double?
        public var paused = false
    }

    /// A clock hour or day of a log, as the meter measured it.
    public struct Period: Sendable, Equatable {
        public var kind: String
        public var from, to: Double
        public var utcOffset: Int
        public var integratedLUFS, loudnessRangeLU: Double?
        public var loudnessRangeSettled: Bool
        public var maxShortTermLUFS, truePeakDBTP: Double?
        public var meteredSeconds: Double
        public var partial: Bool
    }

    /// A stretch of time marked in the report.
    public struct Mark: Sendable, Equatable {
        public enum Kind: String, Sendable { case alarm, silence, gap }
        public var kind: Kind
        public var from, to: Double
        /// The alarm (`too_loud`, ...) or the gap's reason.
        public var detail: String
    }

    public private(set) var points: [Point] = []
    public private(set) var periods: [Period] = []
    public private(set) var marks: [Mark] = []
    /// The target the records were kept against (from their alarms), if they say.
    public private(set) var target: LoudnessTarget?
    public private(set) var sources: [String] = []
    /// Lines that were not read (not JSON, or of another kind), per file.
    public private(set) var skippedLines = 0

    /// Reads the logs and manifests at `paths`, keeping what falls between `from` and `to`.
    public init(paths: [String], from: Double? = nil, to: Double? = nil) throws(ReportError) {
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            let objects = data.split(separator: UInt8(ascii: "\n")).compactMap {
                try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]
            }
            guard !objects.isEmpty else { throw .unreadable(path: path, reason: "it holds no JSON lines: give a jas meter --log or a jas record manifest") }
            let isManifest = objects.contains { ["opened", "closed", "deleted"].contains($0["event"] as? String ?? "") && $0["path"] != nil }
            if isManifest { readManifest(objects, at: path) } else { readLog(objects) }
            sources.append(path)
        }
        let lower = from ?? -.infinity, upper = to ?? .infinity
        points = points.filter { $0.to > lower && $0.from < upper }.sorted { $0.from < $1.from }
        periods = periods.filter { $0.to > lower && $0.from < upper }.sorted { $0.from < $1.from }
        marks = marks.compactMap { mark in
            guard mark.to > lower && mark.from < upper else { return nil }
            var clipped = mark
            clipped.from = max(mark.from, lower)
            clipped.to = min(mark.to, upper)
            return clipped
        }.sorted { $0.from < $1.from }
        addUncoveredTime(lower: lower, upper: upper)
    }

    /// The stretch the report covers.
    public var span: (from: Double, to: Double)? {
        let starts = points.map(\.from) + marks.map(\.from), ends = points.map(\.to) + marks.map(\.to)
        guard let first = starts.min(), let last = ends.max() else { return nil }
        return (first, last)
    }

    // MARK: - A compliance log

    private mutating func readLog(_ objects: [[String: Any]]) {
        var alarmSince: [String: Double] = [:]
        var silenceSince: Double?
        var serverLostAt: Double?
        for object in objects {
            let event = object["event"] as? String ?? ""
            let time = Self.time(object["time"])
            switch event {
            case "interval":
                guard let from = Self.time(object["from"]), let to = Self.time(object["to"]) else { skippedLines += 1; continue }
                points.append(Point(from: from, to: to, maxMomentaryLUFS: Self.number(object["max_momentary_lufs"]),
                                    maxShortTermLUFS: Self.number(object["max_short_term_lufs"]),
                                    shortTermLUFS: Self.number(object["short_term_lufs"]),
                                    integratedLUFS: Self.number(object["integrated_lufs"]),
                                    truePeakDBTP: Self.number(object["true_peak_dbtp"]),
                                    samplePeakDBFS: Self.number(object["sample_peak_dbfs"]),
                                    paused: object["paused"] as? Bool ?? false))
            case "hour", "day":
                guard let from = Self.time(object["from"]), let to = Self.time(object["to"]) else { skippedLines += 1; continue }
                periods.append(Period(kind: event, from: from, to: to, utcOffset: object["utc_offset"] as? Int ?? 0,
                                      integratedLUFS: Self.number(object["integrated_lufs"]),
                                      loudnessRangeLU: Self.number(object["lra_lu"]),
                                      loudnessRangeSettled: object["lra_settled"] as? Bool ?? false,
                                      maxShortTermLUFS: Self.number(object["max_short_term_lufs"]),
                                      truePeakDBTP: Self.number(object["true_peak_dbtp"]),
                                      meteredSeconds: Self.number(object["metered_seconds"]) ?? 0,
                                      partial: object["partial"] as? Bool ?? false))
            case "gap":
                guard let from = Self.time(object["from"]), let to = Self.time(object["to"]) else { skippedLines += 1; continue }
                marks.append(Mark(kind: .gap, from: from, to: to, detail: "no readings"))
            case "loudness_alarm", "loudness_alarm_end":
                guard let time, let alarm = object["alarm"] as? String else { skippedLines += 1; continue }
                // Where its condition began, on the wall clock: the event's time less the audio since then.
                let began = time - ((Self.number(object["seconds"]) ?? 0) - (Self.number(object["since_seconds"]) ?? 0))
                if let lufs = Self.number(object["target_lufs"]), let tolerance = Self.number(object["tolerance_lu"]),
                   let ceiling = Self.number(object["max_true_peak_dbtp"]) {
                    target = LoudnessTarget(name: object["target"] as? String ?? "target", targetLUFS: lufs,
                                            toleranceLU: tolerance, maxTruePeakDBTP: ceiling)
                }
                if event == "loudness_alarm" {
                    alarmSince[alarm] = began
                } else if let since = alarmSince.removeValue(forKey: alarm) {
                    marks.append(Mark(kind: .alarm, from: since, to: began, detail: alarm))
                }
            case "silence":
                if let time { silenceSince = time - (Self.number(object["silent_seconds"]) ?? 0) }
            case "signal":
                if let time, let since = silenceSince {
                    marks.append(Mark(kind: .silence, from: since, to: time, detail: "silence"))
                    silenceSince = nil
                }
            case "mediaServicesWereLost":
                serverLostAt = time
            case "mediaServicesWereReset":
                if let time, let lost = serverLostAt {
                    marks.append(Mark(kind: .gap, from: lost, to: time, detail: "JACK server gone"))
                    serverLostAt = nil
                }
            default:
                continue
            }
        }
        // What was still on when the log ends runs to its last point.
        let end = points.last?.to ?? 0
        for (alarm, since) in alarmSince where end > since { marks.append(Mark(kind: .alarm, from: since, to: end, detail: alarm)) }
        if let since = silenceSince, end > since { marks.append(Mark(kind: .silence, from: since, to: end, detail: "silence")) }
        // A gap line during the server's absence has that reason.
        marks = marks.map { mark in
            guard mark.kind == .gap, mark.detail == "no readings",
                  marks.contains(where: { $0.detail == "JACK server gone" && $0.from < mark.to && $0.to > mark.from }) else { return mark }
            var named = mark
            named.detail = "JACK server gone"
            return named
        }
    }

    // MARK: - A take's manifest

    private mutating func readManifest(_ objects: [[String: Any]], at path: String) {
        for object in objects where object["event"] as? String == "closed" {
            guard let from = Self.number(object["start_utc"]), let to = Self.number(object["end_utc"]) else { continue }
            let loudness = object["loudness"] as? [String: Any] ?? [:]
            points.append(Point(from: from, to: to, maxMomentaryLUFS: Self.number(loudness["max_momentary_lufs"]),
                                maxShortTermLUFS: Self.number(loudness["max_short_term_lufs"]), shortTermLUFS: nil,
                                integratedLUFS: Self.number(loudness["integrated_lufs"]),
                                truePeakDBTP: Self.number(loudness["max_true_peak_dbtp"]), samplePeakDBFS: nil))
            let rate = Self.number(object["sample_rate"]) ?? 48000
            for gap in object["gaps"] as? [[String: Any]] ?? [] {
                guard let at = Self.number(gap["at_frame"]), let frames = Self.number(gap["frames"]) else { continue }
                let start = from + at / rate
                marks.append(Mark(kind: .gap, from: start, to: start + frames / rate, detail: gap["reason"] as? String ?? "gap"))
            }
        }
    }

    /// Time between points that neither a point nor a gap covers: nothing was metered or recorded.
    private mutating func addUncoveredTime(lower: Double, upper: Double) {
        var covered = points.map { ($0.from, $0.to) } + marks.filter { $0.kind == .gap }.map { ($0.from, $0.to) }
        covered.sort { $0.0 < $1.0 }
        var reach: Double?
        var uncovered: [Mark] = []
        for (from, to) in covered {
            if let reach, from - reach > 0.5 {
                uncovered.append(Mark(kind: .gap, from: reach, to: from, detail: "not metered or recorded"))
            }
            reach = max(reach ?? to, to)
        }
        marks = (marks + uncovered).sorted { $0.from < $1.from }
    }

    // MARK: - Reading the lines

    static func number(_ value: Any?) -> Double? {
        (value as? NSNumber).map(\.doubleValue).flatMap { $0.isFinite ? $0 : nil }
    }

    /// ISO 8601 in UTC as jas writes it (`2026-11-26T21:40:03.125Z`, with
    /// or without the fraction), or seconds since 1970.
    static func time(_ value: Any?) -> Double? {
        if let seconds = number(value) { return seconds }
        guard let text = value as? String else { return nil }
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func digits(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for index in range {
                guard bytes[index] >= 48 && bytes[index] <= 57 else { return nil }
                value = value * 10 + Int32(bytes[index] - 48)
            }
            return value
        }
        guard let year = digits(0..<4), let month = digits(5..<7), let day = digits(8..<10), let hour = digits(11..<13),
              let minute = digits(14..<16), let second = digits(17..<19) else { return nil }
        var fields = tm()
        fields.tm_year = year - 1900
        fields.tm_mon = month - 1
        fields.tm_mday = day
        fields.tm_hour = hour
        fields.tm_min = minute
        fields.tm_sec = second
        var fraction = 0.0
        if bytes[19] == UInt8(ascii: "."), bytes.count > 21, let digits = digits(20..<(bytes.count - 1)) {
            fraction = Double(digits) / pow(10, Double(bytes.count - 21))
        }
        return Double(timegm(&fields)) + fraction
    }
}

/// Why a report cannot be made.
public enum ReportError: Error, Sendable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case empty(from: String?, to: String?)
    case unwritable(path: String, reason: String)

    public var description: String {
        switch self {
        case let .unreadable(path, reason): "cannot read '\(path)': \(reason)"
        case let .empty(from, to):
            "nothing in the records" + (from != nil || to != nil ? " between \(from ?? "the start") and \(to ?? "the end")" : "")
                + ": widen --from/--to, or give the log or manifest of that time"
        case let .unwritable(path, reason): "cannot write '\(path)': \(reason)"
        }
    }
}
