import Foundation

/// Where the server's frames fall in UTC, measured in this process: each
/// captured cycle's first frame against the monotonic time its callback ran
/// (stamped on the real-time thread), filtered by a second-order delay-locked
/// loop as JACK filters its own cycle times (a late cycle moves the estimate
/// by a clamped fraction of its lateness), then carried to UTC through the
/// offset between the wall clock and the monotonic clock, read as cycles are
/// drained. A jump of that offset beyond what drift explains is a step of
/// the wall clock (an NTP step, a person setting the date): reported, and
/// the new offset used from then on. Frames are counted in any continuous
/// count the owner keeps (a recorder: its cycles, gaps included). Pure.
public struct FrameClock: Sendable {
    /// What the clock noticed while taking a reading.
    public enum Notice: Sendable, Equatable {
        /// The wall clock jumped by `seconds` (negative: back).
        case step(seconds: Double)
    }

    /// The nominal sample rate, Hz.
    public let sampleRate: Int
    /// A jump of the wall clock's offset larger than this, beyond drift, is a step.
    public static let stepThreshold = 0.005

    // The loop: `anchorTime` is the filtered monotonic time (seconds) of frame `anchorFrame`.
    private var anchorFrame: Int64?
    private var anchorTime = 0.0
    private var secondsPerFrame: Double
    /// Seconds of cycles observed since the loop started (narrows its bandwidth).
    private var lockedSeconds = 0.0
    /// Mean absolute timing error, seconds (scales the clamp on one reading).
    private var meanError = 0.0
    /// Readings clamped in a row, all late (positive) or all early: a
    /// server whose clock jumped (jackd's dummy driver restarts its timing
    /// after an xrun), not a late callback.
    private var clampedInARow = 0
    /// The smallest timing error of those readings: a callback is never
    /// early, so the earliest of them is nearest where the server's clock went.
    private var earliestOfRun = 0.0
    /// The first frame of the run of clamped readings.
    private var runStart: Int64 = 0
    /// Readings in a row that agreed with the loop (within the limit on one reading).
    private var agreeingInARow = 0
    /// The first frame the loop's present line holds for: where the loop
    /// started afresh, or where the late readings of a jump began. A run of
    /// early readings leaves it: the line before was too late (a run of late
    /// callbacks taken for a jump), not a server's clock going back.
    public private(set) var lineStart: Int64?

    /// Whether the last `jumpReadings` readings agreed with the loop: a time
    /// the clock gives for a frame from `lineStart` on is then on the line
    /// the server's cycles are on. While readings are clamped (late
    /// callbacks, or a jump not yet known as one) and right after the loop
    /// starts afresh, a time it gives may be off by as much as the jump, and
    /// is better asked again once the clock has settled.
    public var isSettled: Bool { agreeingInARow >= Self.jumpReadings }
    /// Seconds of cycles the rate is measured over before it is told.
    static let rateSpan = 20.0
    /// How many clamped readings in a row are a jump of the server's clock.
    static let jumpReadings = 8
    /// The rate: each second of cycles keeps its earliest reading against
    /// the loop's line (a callback is never early, only late, so the earliest
    /// is nearest the server's cycle start); the rate is measured through
    /// the seconds of the last ten minutes, less the pairs of seconds a
    /// step made slower (`measure`). A dummy jackd that falls behind
    /// restarts its timing from the late cycle (docs/JACK-FINDINGS.md): time
    /// passes without frames, in steps of any size, many too small to tell
    /// from a late callback. A step lies between one pair of seconds and
    /// makes only that pair slower, where a line fitted through all cycles
    /// would count every step as a slower clock. A discontinuity (a gap, a
    /// jump the loop saw) starts a new segment: no pair crosses it.
    private struct Second {
        var segment: Int
        /// Whole seconds since the segment started.
        var index: Int
        /// The earliest reading: its frame, time, and distance above `line`.
        var frame: Int64, time: Double, residual: Double
        /// What the second's readings are measured against: its first
        /// reading and the rate measured so far (the loop's, before one is).
        var line: (frame: Int64, time: Double, secondsPerFrame: Double)

        func residual(frame: Int64, time: Double) -> Double {
            time - line.time - Double(frame - line.frame) * line.secondsPerFrame
        }
    }
    private var seconds: [Second] = []
    private var segment = 0
    private var segmentStart = 0.0
    /// Up to ten minutes of seconds (and the current one).
    static let keptSeconds = 601
    /// The measured seconds per frame and the seconds of runs it was measured over, as of the last closed second.
    private var measured: (secondsPerFrame: Double, span: Double)?

    // The wall clock: UTC minus monotonic, seconds.
    private var offset: Double?
    private var lastWallMonotonic = 0.0
    /// The first reading since the last step: the drift of the wall clock
    /// against the monotonic clock is measured from it.
    private var driftReference: (monotonic: Double, offset: Double)?
    /// d(offset)/d(monotonic): the wall clock's rate against the monotonic clock, minus 1.
    private var wallDrift = 0.0

    /// A clock for a take at `sampleRate` frames a second, with nothing measured yet.
    public init(sampleRate: Int) {
        self.sampleRate = sampleRate
        secondsPerFrame = 1 / Double(sampleRate)
    }

    /// Whether frames can be carried to UTC yet (a cycle and a wall-clock reading seen).
    public var isReady: Bool { anchorFrame != nil && offset != nil }

    /// A cycle whose first frame is `frame` ran its callback at `monotonicNanoseconds`.
    /// `continuous` false: frames are missing before it (a gap, a restart),
    /// so its time starts the loop's phase afresh (the rate is kept).
    public mutating func observeCycle(frame: Int64, frames: Int, monotonicNanoseconds: UInt64, continuous: Bool) {
        let time = Double(monotonicNanoseconds) / 1e9
        guard let anchor = anchorFrame, continuous, frame > anchor else {
            anchorFrame = frame
            anchorTime = time
            lineStart = frame
            (clampedInARow, agreeingInARow) = (0, 0)
            startSegment(frame: frame, time: time)
            return
        }
        let elapsedFrames = Double(frame - anchor)
        let predicted = anchorTime + elapsedFrames * secondsPerFrame
        let error = time - predicted
        // One reading moves the loop by at most four times the usual error
        // (a callback woken late by a busy machine is not the clock).
        let limit = max(4 * meanError, 50e-6)
        let clamped = min(max(error, -limit), limit)
        if clamped != error {
            agreeingInARow = 0
            let side = error > 0 ? 1 : -1
            if clampedInARow * side > 0 {
                clampedInARow += side
                earliestOfRun = min(earliestOfRun, error)
            } else {
                (clampedInARow, earliestOfRun, runStart) = (side, error, frame)
            }
        } else {
            clampedInARow = 0
            agreeingInARow += 1
        }
        if abs(clampedInARow) >= Self.jumpReadings {
            // The server's clock jumped: its frames are that much later (or
            // earlier) from here, by the run's earliest reading (the others
            // add their callbacks' lateness); the phase starts afresh and the
            // rate is measured anew.
            if clampedInARow > 0 { lineStart = runStart }
            clampedInARow = 0
            anchorFrame = frame
            anchorTime = predicted + earliestOfRun
            startSegment(frame: frame, time: time)
            return
        }
        meanError += (min(abs(error), 10 * max(meanError, 50e-6)) - meanError) * 0.01
        // Wide at first to lock quickly, then narrow (0.2 Hz) so jitter averages out.
        let bandwidth = max(0.2, 4 / (1 + lockedSeconds / 2))
        let period = elapsedFrames * secondsPerFrame
        let omega = min(0.5, 2 * Double.pi * bandwidth * period)
        anchorTime = predicted + 2.squareRoot() * omega * clamped
        anchorFrame = frame
        secondsPerFrame += omega * omega * clamped / elapsedFrames
        lockedSeconds += period
        // An early reading is never a callback: the line is too late (or the server's clock went back).
        guard error >= -limit else { return }
        keepEarliest(frame: frame, time: time)
    }

    /// Keeps the reading if it is its second's earliest; closing a second
    /// measures the rate anew.
    private mutating func keepEarliest(frame: Int64, time: Double) {
        let index = Int((time - segmentStart).rounded(.down))
        if let last = seconds.last, last.segment == segment, last.index == index {
            let residual = last.residual(frame: frame, time: time)
            if residual < last.residual {
                seconds[seconds.count - 1].frame = frame
                seconds[seconds.count - 1].time = time
                seconds[seconds.count - 1].residual = residual
            }
            return
        }
        if !seconds.isEmpty { measure() }
        // Against the rate measured so far: the loop's own rate takes in every step it did not see as a jump.
        seconds.append(Second(segment: segment, index: index, frame: frame, time: time, residual: 0,
                              line: (frame, time, measured?.secondsPerFrame ?? secondsPerFrame)))
        if seconds.count > Self.keptSeconds { seconds.removeFirst(seconds.count - Self.keptSeconds) }
    }

    /// The rate through the seconds, less the pairs a step made slower. A
    /// step only ever makes a pair of consecutive seconds slower, by any
    /// amount, so the pairs no step touched are the densest cluster of their
    /// slopes (found as the half-sample mode), even when most pairs hold a
    /// step; the spread of the pairs faster than it is the noise. A pair
    /// further from it than three times that holds a step (or a second whose
    /// every callback was late) and breaks the seconds into runs; the rate is
    /// the slope of lines through the runs' seconds (one slope, an offset
    /// each), told once the runs cover `rateSpan`.
    private mutating func measure() {
        let pairs = zip(seconds, seconds.dropFirst()).map { a, b in
            a.segment == b.segment && b.frame > a.frame ? (b.time - a.time) / Double(b.frame - a.frame) : nil
        }
        let slopes = pairs.compactMap { $0 }.sorted()
        guard !slopes.isEmpty else { return }
        let mode = Self.halfSampleMode(slopes[...])
        let faster = slopes.prefix { $0 < mode }.map { mode - $0 }.sorted()
        // The median deviation of a half-normal spread is 0.674 of its sigma.
        let sigma = faster.isEmpty ? 0 : Self.median(faster[...]) / 0.674
        let width = max(3 * sigma, mode * 1e-6)
        var spread = 0.0, covariance = 0.0, span = 0.0
        var run: [Second] = []
        func closeRun() {
            defer { run.removeAll(keepingCapacity: true) }
            guard let first = run.first, let last = run.last, run.count >= 2 else { return }
            let points = run.map { (Double($0.frame - first.frame), $0.time - first.time) }
            let (meanX, meanY) = (points.reduce(0) { $0 + $1.0 } / Double(run.count), points.reduce(0) { $0 + $1.1 } / Double(run.count))
            for (x, y) in points {
                spread += (x - meanX) * (x - meanX)
                covariance += (x - meanX) * (y - meanY)
            }
            span += last.time - first.time
        }
        for (index, second) in seconds.enumerated() {
            if index > 0, pairs[index - 1].map({ abs($0 - mode) > width }) ?? true { closeRun() }
            run.append(second)
        }
        closeRun()
        guard spread > 0 else { return }
        measured = (covariance / spread, span)
    }

    private static func median(_ sorted: ArraySlice<Double>) -> Double {
        let middle = sorted.startIndex + sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The half-sample mode of sorted values: the half with the narrowest
    /// range, halved again until two or three values are left.
    private static func halfSampleMode(_ sorted: ArraySlice<Double>) -> Double {
        var values = sorted
        while values.count > 3 {
            let half = (values.count + 1) / 2
            let start = (values.startIndex...(values.endIndex - half)).min {
                values[$0 + half - 1] - values[$0] < values[$1 + half - 1] - values[$1]
            } ?? values.startIndex
            values = values[start..<(start + half)]
        }
        let v = Array(values)
        switch v.count {
        case 3: return v[1] - v[0] < v[2] - v[1] ? (v[0] + v[1]) / 2 : v[1] - v[0] > v[2] - v[1] ? (v[1] + v[2]) / 2 : v[1]
        case 2: return (v[0] + v[1]) / 2
        default: return v[0]
        }
    }

    /// After a discontinuity: the line goes on with a new offset.
    private mutating func startSegment(frame: Int64, time: Double) {
        segment += 1
        segmentStart = time
        keepEarliest(frame: frame, time: time)
    }

    /// A reading of the wall clock; returns a step if the offset jumped.
    public mutating func observeWallClock(_ reading: WallClockReading) -> Notice? {
        let monotonic = Double(reading.monotonicNanoseconds) / 1e9
        let newOffset = reading.utc - monotonic
        defer {
            offset = newOffset
            lastWallMonotonic = monotonic
        }
        guard let offset, let reference = driftReference else {
            driftReference = (monotonic, newOffset)
            return nil
        }
        let elapsed = monotonic - lastWallMonotonic
        let expected = offset + wallDrift * elapsed
        let jump = newOffset - expected
        // Drift moves the offset by well under 1 ms in a second; a step moves it at once.
        if abs(jump) > Self.stepThreshold + 2e-3 * max(0, elapsed) {
            driftReference = (monotonic, newOffset)
            return .step(seconds: jump)
        }
        if monotonic - reference.monotonic >= 1 {
            wallDrift = (newOffset - reference.offset) / (monotonic - reference.monotonic)
        }
        return nil
    }

    /// UTC (seconds since 1970) at which `frame` was at the callback, by the
    /// loop and the latest wall-clock offset; nil before both were seen.
    public func utc(ofFrame frame: Double) -> Double? {
        guard let anchorFrame, let offset else { return nil }
        let monotonic = anchorTime + (frame - Double(anchorFrame)) * secondsPerFrame
        return monotonic + offset + wallDrift * (monotonic - lastWallMonotonic)
    }

    /// The (fractional) frame at the callback at UTC `utc`; nil before ready.
    public func frame(atUTC utc: Double) -> Double? {
        guard let anchorFrame, let offset else { return nil }
        let monotonic = (utc - offset + wallDrift * lastWallMonotonic) / (1 + wallDrift)
        return Double(anchorFrame) + (monotonic - anchorTime) / secondsPerFrame
    }

    /// How far the frame rate is from the nominal rate, measured against
    /// the wall clock over the last ten minutes, parts per million
    /// (positive: fast); nil until 20 s of cycles were seen between
    /// discontinuities and steps (in pieces), and while steps come so often
    /// that the last ten minutes hold less.
    public var rateErrorPPM: Double? {
        guard isReady, let measured, measured.span >= Self.rateSpan else { return nil }
        return (1 / measured.secondsPerFrame / (1 + wallDrift) / Double(sampleRate) - 1) * 1e6
    }
}
