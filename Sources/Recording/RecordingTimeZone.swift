import Foundation

/// The one time zone a take's names, `bext` origination time, TimeReference
/// and clock-aligned cuts use.
public enum RecordingTimeZone: Sendable, Equatable {
    /// The process's local time as the C library has it: `TZ` in any form
    /// glibc reads (`Europe/Berlin`, or POSIX `<-0310>+03:10`).
    case local
    /// UTC (`--utc`).
    case utc
    /// A named zone (a library user's choice).
    case zone(TimeZone)

    /// The wall clock's fields at `utc` (seconds since 1970) in this zone,
    /// with its offset and abbreviation, as strftime(3) reads them.
    func withFields<Result>(at utc: Double, _ body: (inout tm) -> Result) -> Result {
        var seconds = time_t(utc.rounded(.down))
        var fields = tm()
        switch self {
        case .local:
            localtime_r(&seconds, &fields)
            return body(&fields)
        case .utc:
            gmtime_r(&seconds, &fields)
            return body(&fields)
        case let .zone(zone):
            let date = Date(timeIntervalSince1970: Double(seconds))
            let offset = zone.secondsFromGMT(for: date)
            var shifted = seconds + time_t(offset)
            gmtime_r(&shifted, &fields)
            fields.tm_gmtoff = offset
            fields.tm_isdst = zone.isDaylightSavingTime(for: date) ? 1 : 0
            let abbreviation = strdup(zone.abbreviation(for: date) ?? "")
            defer { free(abbreviation) }
            fields.tm_zone = UnsafePointer(abbreviation)
            return body(&fields)
        }
    }

    /// Seconds east of UTC at `utc`.
    public func offset(at utc: Double) -> Int {
        withFields(at: utc) { Int($0.tm_gmtoff) }
    }

    /// Seconds since this zone's midnight of the day `utc` falls in, as its
    /// clock shows them (a day with a daylight-saving change included).
    public func secondsOfDay(at utc: Double) -> Double {
        let whole = withFields(at: utc) { Double(Int($0.tm_hour) * 3600 + Int($0.tm_min) * 60 + Int($0.tm_sec)) }
        return whole + (utc - utc.rounded(.down))
    }

    /// The first moment after `utc` at which this zone's clock shows a
    /// multiple of `period` seconds since its midnight (`period` divides a
    /// day). Where the offset changes (daylight saving) before that, the
    /// moment of the change is one if the clock then shows such a multiple
    /// (it does for every period up to an hour), else the count goes on
    /// from it at the new offset: in the hour a clock shows twice, cuts go
    /// on every period, their names told apart by the offset (`%z`).
    public func nextBoundary(after utc: Double, period: Double) -> Double {
        var from = utc
        while true {
            let offset = Double(self.offset(at: from))
            let candidate = (((from + offset) / period).rounded(.down) + 1) * period - offset
            if Double(self.offset(at: candidate)) == offset { return candidate }
            // The offset changes before the candidate: the first second it has changed.
            var same = from.rounded(.down), changed = candidate.rounded(.up)
            while changed - same > 1 {
                let middle = ((same + changed) / 2).rounded(.down)
                if Double(self.offset(at: middle)) == offset { same = middle } else { changed = middle }
            }
            let clock = changed + Double(self.offset(at: changed))
            if changed > utc && (clock / period).rounded(.down) * period == clock { return changed }
            from = changed
        }
    }

    /// `pattern` with its strftime(3) fields filled in for `utc` in this zone.
    public func format(_ pattern: String, at utc: Double) -> String {
        guard pattern.contains("%") else { return pattern }
        return withFields(at: utc) { fields in
            var buffer = [CChar](repeating: 0, count: 4096)
            let count = strftime(&buffer, buffer.count, pattern, &fields)
            guard count > 0 else { return pattern }
            return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// Whether the zone's offset changes in the coming year (daylight saving).
    public var changesOffset: Bool {
        let now = Date().timeIntervalSince1970
        let first = offset(at: now)
        return stride(from: 0.0, through: 366 * 86_400, by: 86_400 / 4).contains { offset(at: now + $0) != first }
    }
}
