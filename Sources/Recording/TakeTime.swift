import Capture

/// When a take's frames sounded: the frame clock fed by every cycle and gap
/// the disk loop places, and where the take's timeline positions fall on
/// its count. Pure; the disk loop owns it and lends it to the stages that
/// name, stamp and cut files.
struct TakeTime {
    /// Frames to UTC, measured from the cycles (see `FrameClock`).
    private(set) var frameClock: FrameClock
    /// The rate the open set's frames are at.
    private(set) var sampleRate: Int
    /// `clockFrames` minus the timeline position of the same frame.
    var positionOffset: Int64 = 0
    /// The recorded ports' capture latency, frames.
    let captureLatencyFrames: Int
    /// The wall clock the frames are carried to UTC by (an input, for tests).
    let wallClock: any WallClock
    /// The clock's frame count: every cycle's frames and every gap's,
    /// continuous across the take (and before it, while armed).
    private var clockFrames: Int64 = 0

    init(sampleRate: Int, captureLatencyFrames: Int, wallClock: any WallClock) {
        self.sampleRate = sampleRate
        self.captureLatencyFrames = captureLatencyFrames
        self.wallClock = wallClock
        frameClock = FrameClock(sampleRate: sampleRate)
    }

    /// What one cycle told the clock.
    struct Observation {
        /// The cycle's first frame in the clock's count.
        let frame: Int64
        /// The wall clock as read with it.
        let reading: WallClockReading
        /// The wall clock stepped by this much (seconds) since the last reading.
        let stepSeconds: Double?
    }

    /// Feeds the cycle, placed on the timeline as `step` says, and a reading
    /// of the wall clock to the frame clock.
    mutating func observe(_ header: CycleHeader, _ step: CaptureTimeline.Step) -> Observation {
        var continuous = true
        switch step {
        case .first: continuous = false
        case let .gap(frames, _):
            clockFrames += Int64(frames)
            continuous = false
        case .continuous: break
        }
        let frame = clockFrames
        frameClock.observeCycle(frame: frame, frames: header.frames, monotonicNanoseconds: header.nanoseconds,
                                continuous: continuous)
        clockFrames += Int64(header.frames)
        let reading = wallClock.read()
        var stepSeconds: Double?
        if case let .step(seconds) = frameClock.observeWallClock(reading) { stepSeconds = seconds }
        return Observation(frame: frame, reading: reading, stepSeconds: stepSeconds)
    }

    /// The server came back at another rate: the clock starts afresh at it.
    mutating func restart(sampleRate rate: Int) {
        sampleRate = rate
        frameClock = FrameClock(sampleRate: rate)
    }

    /// The recorded ports' capture latency, seconds.
    var captureLatency: Double { Double(captureLatencyFrames) / Double(sampleRate) }

    /// UTC of the sound at timeline position `position`: when it reached the
    /// input (its callback's time less the capture latency). Before the
    /// clock is ready, the wall clock now.
    func utc(ofPosition position: Int64) -> Double {
        utc(ofClockFrame: position + positionOffset) ?? wallClock.read().utc - captureLatency
    }

    /// UTC of the sound at the clock's frame `frame` (nil before the clock is ready).
    func utc(ofClockFrame frame: Int64) -> Double? {
        frameClock.utc(ofFrame: Double(frame)).map { $0 - captureLatency }
    }

    /// The timeline position whose sound reached the input nearest UTC `utc` (nil before the clock is ready).
    func position(atUTC utc: Double) -> Int64? {
        frameClock.frame(atUTC: utc + captureLatency).map { Int64($0.rounded()) - positionOffset }
    }
}
