import Foundation

/// The names of a take's files, from the `--output` the user gave: a plain
/// path, or a pattern with strftime(3) fields (`take-%Y%m%d-%H%M%S.wav`)
/// filled in with the wall-clock time of each file's first frame.
///
/// Without rotation, the first set is the path itself and a set started by
/// a rate change is `NAME-partN`. With rotation, a pattern without time
/// fields numbers the sets (`NAME-001`, `NAME-002`, ...). A name that is
/// taken is never replaced: a later set tries the next part number, or
/// (rotating) adds a counter (`-2`, `-3`, ...).
struct TakeNaming: Sendable {
    /// The `--output` as given.
    let pattern: String
    let rotates: Bool
    let channels: Int
    let perChannel: Bool

    /// Whether the pattern has strftime fields.
    var hasTimeFields: Bool { pattern.contains("%") }

    /// The file paths of set `index` (1-based) starting at `date`; `attempt`
    /// counts the names already found taken for it.
    func paths(index: Int, date: Date, attempt: Int = 0) -> [String] {
        let base = basePath(index: index, date: date, attempt: attempt)
        guard perChannel else { return [base] }
        let stem = (base as NSString).deletingPathExtension, ext = (base as NSString).pathExtension
        return (1...channels).map { channel in ext.isEmpty ? "\(stem)_\(channel)" : "\(stem)_\(channel).\(ext)" }
    }

    /// The set's name before the channel numbers: what its log is named after.
    func basePath(index: Int, date: Date, attempt: Int = 0) -> String {
        let expanded = Self.expand(pattern, at: date)
        let stem = (expanded as NSString).deletingPathExtension, ext = (expanded as NSString).pathExtension
        var name = stem
        if rotates {
            if !hasTimeFields { name += String(format: "-%03d", index) }
            if attempt > 0 { name += "-\(attempt + 1)" }
        } else if index + attempt > 1 {
            name += "-part\(index + attempt)"
        }
        return ext.isEmpty ? name : "\(name).\(ext)"
    }

    /// `pattern` with its strftime fields filled in for local time `date`.
    static func expand(_ pattern: String, at date: Date) -> String {
        guard pattern.contains("%") else { return pattern }
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = strftime(&buffer, buffer.count, pattern, &parts)
        guard count > 0 else { return pattern }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
