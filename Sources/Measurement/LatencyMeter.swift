import JackAudioSession
import Capture
import Foundation
import JackKit
import JackRuntime
import Synchronization

/// Round-trip latency measurement: a measurement-mode playAndRecord session
/// plays `MultiToneSignal` out of one port, captures it on another, and turns
/// each window of `MultiToneSignal.windowFrames` captured frames into a
/// `LatencyReading`.
///
/// The real-time side is `RealtimeDelayProbe`; everything here runs on the
/// thread that calls `nextReading` (one thread). After the start, and after
/// any gap in the captured frames (an xrun that dropped cycles, a full ring,
/// a server restart), one window's worth of frames is skipped before the next
/// window begins, so a window never holds the signal's onset. A window during
/// which the session counted an xrun becomes an invalid reading.
///
/// Another session that takes the audio (a second measurement on the same
/// server, a call) interrupts the meter's session: `onNotice` hears who, no
/// readings come meanwhile, and the meter activates again when the
/// interruption ends (retrying every half second while it is refused).
public final class LatencyMeter: @unchecked Sendable { // its window state belongs to its one analysis thread; the real-time side talks to it only through the probe's ring
    /// What to measure and how.
    public struct Configuration: Sendable {
        /// The JACK server.
        public var serverName: String
        /// The port the test signal is sent to (e.g. `system:playback_1`).
        public var outputPort: String
        /// The port it comes back on (e.g. `system:capture_1`).
        public var inputPort: String
        /// The session's JACK client name.
        public var clientName = "jas-latency"
        /// A period to request, frames (nil: keep the server's).
        public var preferredPeriodFrames: Int?
        /// Where calibrations are read from (they are part of the reported latency).
        public var calibration: LatencyCalibrationStore? = LatencyCalibrationStore()
        /// Told of interruptions and of measuring again after them (on a thread of its own).
        public var onNotice: (@Sendable (LatencyMeterNotice) -> Void)?

        /// A meter of the path from `outputPort` back to `inputPort` on `serverName`.
        public init(serverName: String, outputPort: String, inputPort: String) {
            self.serverName = serverName
            self.outputPort = outputPort
            self.inputPort = inputPort
        }
    }

    /// What the meter was asked to do.
    public let configuration: Configuration
    /// The measurement session (for its sample rate, latency, events).
    public let session: AudioSession
    /// The signal sent.
    public let signal = MultiToneSignal()
    let probe: RealtimeDelayProbe
    private let stopped = Atomic<Bool>(false)
    private var watcher: Task<Void, Never>?
    /// Seconds a finished window waits for a late xrun notification.
    static let xrunGrace = 0.03

    // The reading thread's state.
    private let window: UnsafeMutableBufferPointer<Float>
    private let scratch: UnsafeMutableBufferPointer<Float>
    private var filled = 0
    private var windowStart: UInt32 = 0
    private var xrunsAtWindowStart = 0
    private var latencyAtWindowStart = ReportedLatency(capture: nil, playback: nil, settled: false)
    private var nextFrame: UInt32?
    private var framesSettled = 0
    private var xrunsSeen = 0
    private var readingsMade = 0
    /// Frames fed since the last reading, valid or not.
    private var framesSinceReading = 0
    private var pending: [(reading: LatencyReading, xrunsBefore: Int, due: ContinuousClock.Instant)] = []

    /// A meter for `configuration`; nothing runs before `start()`.
    public init(configuration: Configuration) {
        self.configuration = configuration
        session = AudioSession(clientName: configuration.clientName, serverName: configuration.serverName,
                               recordConsent: .givenByCaller, latencyCalibration: configuration.calibration)
        probe = RealtimeDelayProbe(signal: signal, ringSeconds: 4)
        window = .allocate(capacity: MultiToneSignal.windowFrames)
        window.initialize(repeating: 0)
        scratch = .allocate(capacity: MultiToneSignal.windowFrames)
        scratch.initialize(repeating: 0)
    }

    deinit {
        watcher?.cancel()
        session.close()
        window.deallocate()
        scratch.deallocate()
    }

    /// Activates the session: its output connected to `outputPort`, its input
    /// to `inputPort`, the probe running. Errors name the server or port.
    public func start() throws(AudioSessionError) {
        try session.setCategory(.playAndRecord, mode: .measurement)
        try session.setPreferredInputNumberOfChannels(1)
        try session.setPreferredOutputNumberOfChannels(1)
        session.setPreferredInputPortNames([configuration.inputPort])
        session.setPreferredOutputPortNames([configuration.outputPort])
        session.setRenderBlock(probe.renderBlock)
        watchInterruptions()
        try session.setActive(true)
        if let frames = configuration.preferredPeriodFrames {
            try session.setPreferredIOBufferDuration(Double(frames) / session.sampleRate)
        }
        xrunsSeen = session.xrunCount
    }

    /// Stops measuring and closes the session.
    public func stop() {
        stopped.store(true, ordering: .releasing)
        watcher?.cancel()
        try? session.setActive(false)
        session.close()
    }

    /// The client of the session that interrupts this one now (nil: none).
    public var interruptedBy: String? { session.isInterrupted ? session.interruptingClient ?? "another session" : nil }

    /// Hears the session's interruptions: says who, and activates again when they end.
    private func watchInterruptions() {
        let session = session, events = session.events, notify = configuration.onNotice
        let stopped: @Sendable () -> Bool = { [weak self] in self?.stopped.load(ordering: .acquiring) ?? true }
        watcher = Task.detached {
            for await event in events {
                guard case let .interruption(type, _, _) = event else { continue }
                if type == .began {
                    notify?(.interrupted(by: session.interruptingClient ?? "another session"))
                } else {
                    PortTap.activateAgain(session, stopped: stopped,
                                          refused: { notify?(.resumeRefused(reason: $0.message)) },
                                          resumed: { notify?(.resumed(attempts: $0)) })
                }
            }
        }
    }

    /// The next reading, valid or not; nil when none came within `timeout`
    /// seconds (the server is gone, or the session is not running).
    public func nextReading(timeout: Double = 5) -> LatencyReading? {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while true {
            drainRing()
            if let first = pending.first, first.due <= .now {
                pending.removeFirst()
                var reading = first.reading
                if session.xrunCount != first.xrunsBefore { invalidate(&reading, .xrun) }
                return reading
            }
            let now = ContinuousClock.now
            if now >= deadline { return nil }
            // Asleep until the probe hands over a cycle, or the next reading is due, or the time is up.
            let due = pending.first.map { ($0.due - now).inSeconds } ?? .infinity
            probe.wakeup.wait(timeout: max(0.001, min(due, (deadline - now).inSeconds)))
        }
    }

    /// Reads every captured cycle waiting in the ring.
    private func drainRing() {
        let ring = probe.ring
        while ring.availableToRead >= CycleHeader.floatCount {
            let head = UnsafeMutableBufferPointer(rebasing: scratch[0..<CycleHeader.floatCount])
            _ = ring.read(into: head)
            let header = CycleHeader(UnsafeBufferPointer(head))
            let start = header.frameTime
            var remaining = header.frames
            var offset: UInt32 = 0
            // The probe wrote header and frames in one go: they are all there.
            while remaining > 0 {
                let chunk = UnsafeMutableBufferPointer(rebasing: scratch[0..<min(remaining, scratch.count)])
                let count = ring.read(into: chunk)
                feed(UnsafeBufferPointer(rebasing: chunk[0..<count]), startingAt: start &+ offset)
                remaining -= count
                offset &+= UInt32(count)
            }
        }
    }

    /// Adds captured frames that start at JACK frame time `start`.
    private func feed(_ frames: UnsafeBufferPointer<Float>, startingAt start: UInt32) {
        let xruns = session.xrunCount
        if nextFrame != start || xruns != xrunsSeen {
            // A gap or an xrun: the window under way is spoilt, and the path
            // may carry the disturbance for up to one window's length. Also
            // while settling: xruns closer together than two windows would
            // otherwise leave the meter silent (seen for 10 s under load);
            // a spoilt reading says why there is no number.
            if nextFrame != nil && (filled > 0 || framesSinceReading >= MultiToneSignal.windowFrames) {
                finishWindow(problem: .xrun)
            }
            filled = 0
            framesSettled = 0
            xrunsSeen = xruns
        }
        nextFrame = start &+ UInt32(frames.count)
        framesSinceReading += frames.count
        var offset = 0
        if framesSettled < MultiToneSignal.windowFrames {
            let skip = min(MultiToneSignal.windowFrames - framesSettled, frames.count)
            framesSettled += skip
            offset = skip
        }
        while offset < frames.count {
            if filled == 0 {
                windowStart = start &+ UInt32(offset)
                xrunsAtWindowStart = xruns
                latencyAtWindowStart = session.reportedLatency
            }
            let take = min(MultiToneSignal.windowFrames - filled, frames.count - offset)
            (window.baseAddress! + filled).update(from: frames.baseAddress! + offset, count: take)
            filled += take
            offset += take
            if filled == MultiToneSignal.windowFrames {
                finishWindow(problem: nil)
                filled = 0
            }
        }
    }

    /// Turns the window into a reading (analysed when whole and undisturbed)
    /// and queues it for the xrun grace period.
    private func finishWindow(problem: LatencyProblem?) {
        readingsMade += 1
        framesSinceReading = 0
        let rate = Int(session.sampleRate)
        // What JACK said at the window's start and says at its end: a value
        // that was not known or moved in between is no value to compare with.
        let latency = session.reportedLatency
        let reportedProblem: ReportedLatencyProblem? =
            if latency.roundTripFrames == nil || latencyAtWindowStart.roundTripFrames == nil { .unknown }
            else if latency.capture != latencyAtWindowStart.capture || latency.playback != latencyAtWindowStart.playback { .changed }
            else { nil }
        let known = reportedProblem == nil
        var reading = LatencyReading(index: readingsMade, valid: false, problem: problem, measuredFrames: nil,
                                     measuredMs: nil, reportedFrames: known ? latency.roundTripFrames : nil,
                                     reportedCaptureFrames: known ? latency.capture?.max : nil,
                                     reportedPlaybackFrames: known ? latency.playback?.max : nil,
                                     reportedProblem: reportedProblem,
                                     reportedSettled: latency.settled && latencyAtWindowStart.settled,
                                     excessFrames: nil, inverted: false,
                                     weakestToneDBFS: -.infinity, toneSpreadFrames: nil, sampleRate: rate,
                                     periodFrames: session.ioBufferFrames, windowStartFrame: windowStart)
        if problem == nil {
            let estimate = signal.estimate(window: UnsafeBufferPointer(window), startFrame: windowStart)
            reading.weakestToneDBFS = estimate.weakestToneDBFS
            reading.toneSpreadFrames = estimate.toneSpreadFrames
            reading.inverted = estimate.inverted
            if let delay = estimate.delayFrames {
                reading.valid = true
                reading.measuredFrames = delay
                reading.measuredMs = rate > 0 ? delay * 1000 / Double(rate) : nil
                reading.excessFrames = reading.reportedFrames.map { delay - Double($0) }
            } else {
                reading.problem = estimate.problem
            }
        }
        pending.append((reading, xrunsAtWindowStart, .now + .seconds(Self.xrunGrace)))
    }

    private func invalidate(_ reading: inout LatencyReading, _ problem: LatencyProblem) {
        reading.valid = false
        reading.problem = problem
        reading.measuredFrames = nil
        reading.measuredMs = nil
        reading.excessFrames = nil
    }
}
