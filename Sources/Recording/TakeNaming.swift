import Foundation

/// The names of a take's files, from the `--output` the user gave: a plain
/// path, or a pattern with strftime(3) fields (`take-%Y%m%d-%H%M%S.wav`)
/// filled in with the wall-clock time of each file's first frame, in the
/// take's one time zone, to the millisecond (a cut on the clock's boundary
/// is named by the boundary).
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
    let zone: RecordingTimeZone

    /// Whether the pattern has strftime fields.
    var hasTimeFields: Bool { pattern.contains("%") }

    /// The file paths of set `index` (1-based) starting at `utc` (seconds
    /// since 1970); `attempt` counts the names already found taken for it.
    func paths(index: Int, utc: Double, attempt: Int = 0) -> [String] {
        let base = basePath(index: index, utc: utc, attempt: attempt)
        guard perChannel else { return [base] }
        let stem = (base as NSString).deletingPathExtension, ext = (base as NSString).pathExtension
        return (1...channels).map { channel in ext.isEmpty ? "\(stem)_\(channel)" : "\(stem)_\(channel).\(ext)" }
    }

    /// The set's name before the channel numbers: what its log is named after.
    func basePath(index: Int, utc: Double, attempt: Int = 0) -> String {
        let expanded = zone.format(pattern, at: (utc * 1000).rounded() / 1000)
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
}
