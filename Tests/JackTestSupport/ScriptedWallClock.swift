import Foundation
import JackKit
import Recording

/// A wall clock made from the monotonic clock: it reads `start` now and then
/// runs `ppm` parts per million fast (negative: slow), and jumps by each
/// step's seconds once the monotonic clock passes its moment: a logger's
/// behaviour on a clock that drifts or is set, tested against a real jackd.
public struct ScriptedWallClock: WallClock {
    /// One jump: `seconds` added once `afterSeconds` have passed since the clock was made.
    public struct Step: Sendable {
        public var afterSeconds: Double
        public var seconds: Double
        public init(afterSeconds: Double, seconds: Double) {
            self.afterSeconds = afterSeconds
            self.seconds = seconds
        }
    }

    public let origin: UInt64
    public let start: Double
    public let ppm: Double
    public let steps: [Step]

    public init(start: Double, ppm: Double = 0, steps: [Step] = []) {
        origin = MonotonicClock.nanoseconds
        self.start = start
        self.ppm = ppm
        self.steps = steps
    }

    public func read() -> WallClockReading {
        let now = MonotonicClock.nanoseconds
        let elapsed = Double(now - origin) / 1e9
        let jumped = steps.filter { elapsed >= $0.afterSeconds }.reduce(0) { $0 + $1.seconds }
        return WallClockReading(utc: start + elapsed * (1 + ppm / 1e6) + jumped, monotonicNanoseconds: now)
    }
}
