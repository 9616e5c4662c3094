/// Where a rotating take starts its next set of files.
enum RotationRule: Equatable, Sendable {
    /// Every this many frames of the take's timeline (`--rotate-from start`).
    case everyFrames(Int64)
    /// On the wall clock's boundaries: every multiple of this many seconds
    /// since midnight in the take's time zone (a period that divides a day).
    case onClock(seconds: Double)

    /// The rule for a period of `seconds` at `sampleRate`: on the clock when
    /// asked and the period divides a day into whole seconds, else from the take's start.
    init(seconds: Double, sampleRate: Int, alignment: RotationAlignment) {
        let whole = seconds.rounded()
        if alignment == .clock, whole == seconds, whole >= 1, 86_400.truncatingRemainder(dividingBy: whole) == 0 {
            self = .onClock(seconds: whole)
        } else {
            self = .everyFrames(Int64((seconds * Double(sampleRate)).rounded()))
        }
    }
}

/// Where a rotating take's cuts are counted from.
public enum RotationAlignment: String, Sendable, CaseIterable {
    /// The wall clock's boundaries (`10s` cuts at :00, :10, ...; `1h` on the
    /// hour), when the period divides a day; the first file is shorter.
    case clock
    /// The take's first frame (every period of the take's own timeline).
    case start
}
