import Foundation
import JackKit

/// One look at the wall clock: UTC, and CLOCK_MONOTONIC at the same moment
/// (the clock captured cycles are stamped with), so that frames can be
/// carried to UTC through the offset between the two.
public struct WallClockReading: Sendable, Equatable {
    /// Seconds since 1970-01-01 00:00 UTC.
    public var utc: Double
    /// CLOCK_MONOTONIC, nanoseconds.
    public var monotonicNanoseconds: UInt64

    /// A reading of `utc` taken at `monotonicNanoseconds`.
    public init(utc: Double, monotonicNanoseconds: UInt64) {
        self.utc = utc
        self.monotonicNanoseconds = monotonicNanoseconds
    }
}

/// The wall clock a recorder names files and stamps `bext` by: the
/// system's by default; a test gives one that drifts, steps, or crosses
/// midnight or a daylight-saving change.
public protocol WallClock: Sendable {
    /// UTC now, with the monotonic clock read at the same moment.
    func read() -> WallClockReading
}

/// The system's clock: CLOCK_REALTIME, read between two reads of
/// CLOCK_MONOTONIC and paired with their midpoint.
public struct SystemWallClock: WallClock {
    /// The system's clock.
    public init() {}

    public func read() -> WallClockReading {
        let before = MonotonicClock.nanoseconds
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let after = MonotonicClock.nanoseconds
        return WallClockReading(utc: Double(now.tv_sec) + Double(now.tv_nsec) / 1e9,
                                monotonicNanoseconds: before + (after - before) / 2)
    }
}
