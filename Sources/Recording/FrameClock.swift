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
    /// Seconds of cycles the rate is measured over before it is told.
    static let rateSpan = 20.0
    /// How many clamped readings in a row are a jump of the server's clock.
    static let jumpReadings = 8
    /// The rate is the slope of least-squares lines through the cycles'
    /// (frame, time) over up to ten minutes: sums per minute (the last 10 and
    /// the current one), relative to `fitOrigin`. A discontinuity (a gap, a
    /// jump of the server's clock after an xrun) starts a new segment, its own
    /// origin and offset: the segments share one slope (each centred on its
    /// own means), so a take with xruns is still measured. A reading the loop
    /// clamped (a late callback) is left out.
    private struct Sums {
        var segment = 0
        var count = 0.0, frames = 0.0, times = 0.0, framesSquared = 0.0, framesTimes = 0.0
        var firstTime: Double
        var lastTime: Double

        mutating func add(frame: Double, time: Double) {
            count += 1
            frames += frame
            times += time
            framesSquared += frame * frame
            framesTimes += frame * time
            lastTime = time
        }

        static func + (a: Sums, b: Sums) -> Sums {
            Sums(segment: a.segment, count: a.count + b.count, frames: a.frames + b.frames, times: a.times + b.times,
                 framesSquared: a.framesSquared + b.framesSquared, framesTimes: a.framesTimes + b.framesTimes,
                 firstTime: min(a.firstTime, b.firstTime), lastTime: max(a.lastTime, b.lastTime))
        }

        /// Σ(x − x̄)² and Σ(x − x̄)(y − ȳ): the segment's line without its offset.
        var centred: (framesSquared: Double, framesTimes: Double) {
            (framesSquared - frames * frames / count, framesTimes - frames * times / count)
        }
    }
    private var minutes: [Sums] = []
    private var segment = 0
    private var fitOrigin: (frame: Int64, time: Double) = (0, 0)

    // The wall clock: UTC minus monotonic, seconds.
    private var offset: Double?
    private var lastWallMonotonic = 0.0
    /// The first reading since the last step: the drift of the wall clock
    /// against the monotonic clock is measured from it.
    private var driftReference: (monotonic: Double, offset: Double)?
    /// d(offset)/d(monotonic): the wall clock's rate against the monotonic clock, minus 1.
    private var wallDrift = 0.0

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
            let side = error > 0 ? 1 : -1
            clampedInARow = clampedInARow * side > 0 ? clampedInARow + side : side
        } else {
            clampedInARow = 0
        }
        if abs(clampedInARow) >= Self.jumpReadings {
            // The server's clock jumped: its frames are that much later (or
            // earlier) from here; the phase starts afresh and the rate is measured anew.
            clampedInARow = 0
            anchorFrame = frame
            anchorTime = time
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
        guard error == clamped else { return }
        let (x, y) = (Double(frame - fitOrigin.frame), time - fitOrigin.time)
        if minutes.last.map({ $0.segment != segment || y - $0.firstTime >= 60 }) ?? true {
            minutes.append(Sums(segment: segment, firstTime: y, lastTime: y))
            // Ten minutes of cycles and the current one, whatever the segments.
            while minutes.count > 1, minutes.dropLast().reduce(0, { $0 + $1.lastTime - $1.firstTime }) > 600 {
                minutes.removeFirst()
            }
            if minutes.count > 600 { minutes.removeFirst() }
        }
        minutes[minutes.count - 1].add(frame: x, time: y)
    }

    /// After a discontinuity: the line goes on with a new offset.
    private mutating func startSegment(frame: Int64, time: Double) {
        segment += 1
        fitOrigin = (frame, time)
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
    /// (positive: fast); nil until 20 s of cycles were seen (in pieces, when
    /// discontinuities broke them).
    public var rateErrorPPM: Double? {
        guard isReady else { return nil }
        let segments = Dictionary(grouping: minutes, by: \.segment).values.map { $0.dropFirst().reduce($0[0], +) }
        let span = segments.reduce(0) { $0 + $1.lastTime - $1.firstTime }
        guard span >= Self.rateSpan else { return nil }
        let (spread, covariance) = segments.filter { $0.count >= 2 }.reduce((0.0, 0.0)) {
            ($0.0 + $1.centred.framesSquared, $0.1 + $1.centred.framesTimes)
        }
        guard spread > 0 else { return nil }
        let secondsPerFrame = covariance / spread
        return (1 / secondsPerFrame / (1 + wallDrift) / Double(sampleRate) - 1) * 1e6
    }
}
