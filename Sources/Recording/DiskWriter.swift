import Capture
import JackKit
import JackRuntime
import Foundation
import Synchronization

/// The disk thread of a recording: drains the capture ring and drives the
/// take's stages, cycle by cycle. `CaptureTimeline` places each cycle and
/// finds the gaps (silence for every missing frame, logged); `TakeTime`
/// carries frames to UTC; `StartGate` holds the pre-roll while armed and
/// says where the take starts; `TakeLedger` counts; `TakeFileSets` opens,
/// cuts and catalogues the files; `SilenceAlarm` listens for dead air and
/// `DiskFullPolicy` says what a full disk costs. The files' headers are
/// rewritten every half second, so that a crash loses at most that much.
final class DiskWriter: @unchecked Sendable { // `connectedFrom` is the disk thread's own; shared state is in mutexes
    struct Settings {
        var prerollFrames: Int
        /// Linear sample level that starts the recording (nil: no trigger).
        var triggerLevel: Float?
        /// Whether to wait for `requestStart` (else start at the first frame or the trigger).
        var waitsForStart: Bool
        /// The wall clock names, `bext` and clock-aligned cuts are measured against.
        var clock: any WallClock = SystemWallClock()
        /// Capture latency of the recorded ports, frames.
        var captureLatencyFrames: Int
        /// Dead air: the level, dBFS, and how long below it makes a `silence` event.
        var silenceThresholdDBFS = -60.0
        var silenceHoldSeconds = 10.0
        /// End the take when the disk is full, instead of waiting for room.
        var stopsOnDiskFull = false
        /// Hears what is written (nil: silence); see `Recorder.Configuration.onWritten`.
        var onWritten: (@Sendable (UnsafeBufferPointer<Float>?, Int) -> Void)?
    }

    /// Cycles before this JACK frame time ran before the ports were connected
    /// and are skipped (set once, before the thread starts).
    var connectedFrom: UInt32?

    let capture: RealtimeCapture
    let settings: Settings
    /// Where events go: the sidecar log and the recorder's event stream.
    let record: @Sendable (RecordingEvent) -> Void
    /// The take's counters and gaps.
    let ledger: TakeLedger
    /// Why the recording ends, for the log's last line.
    private let stopReason = Mutex<String?>(nil)
    /// Rung after each pass of the disk loop that wrote something, and at its
    /// end: `settledPosition` looks again then.
    private let passBell = CycleBell()
    /// The interruption under way: who, and since when (monotonic
    /// nanoseconds). Its gap is written when capture resumes, or at the
    /// take's end: a `--for` take ends on time however long it lasts.
    private let interruption = Mutex<(by: String, since: UInt64)?>(nil)
    /// The current sample rate of the server (read at a restart).
    let currentSampleRate: @Sendable () -> Int
    /// JACK frame time of the start command, +1 (0: none yet).
    private let startRequest = Atomic<Int64>(0)
    private let stopRequested = Atomic<Bool>(false)
    /// Turns of the disk thread's loop (see `Recorder.diskBeats`).
    let beats = Atomic<UInt64>(0)
    private let done = DispatchSemaphore(value: 0)
    /// Reached once the recording reached its limit, failed, was ended or stopped.
    let finished = TakeEnd()

    // The disk thread's own state: the stages.
    private var timeline: CaptureTimeline
    private var time: TakeTime
    private var gate: StartGate
    private let fileSets: TakeFileSets
    private var silenceAlarm: SilenceAlarm
    /// While the disk is full: frames counted, not written, until there is room.
    private var diskFull = DiskFullPolicy()
    /// The frames of the cycles the timeline holds back, oldest first.
    private var heldFrames: [[Float]] = []
    /// When the clock's rate was last logged (monotonic nanoseconds).
    private var lastClockReport: UInt64 = 0
    private let reader: CaptureReader
    private let channels: Int

    /// `fileSets`: the take's sets, the first claimed (and opened, if named
    /// before its first frame) while the take was prepared.
    init(capture: RealtimeCapture, fileSets: TakeFileSets, ledger: TakeLedger, sampleRate: Int, settings: Settings,
         record: @escaping @Sendable (RecordingEvent) -> Void, currentSampleRate: @escaping @Sendable () -> Int) {
        self.capture = capture
        self.fileSets = fileSets
        self.ledger = ledger
        self.settings = settings
        self.record = record
        self.currentSampleRate = currentSampleRate
        channels = capture.channels
        timeline = CaptureTimeline(sampleRate: sampleRate)
        time = TakeTime(sampleRate: sampleRate, captureLatencyFrames: settings.captureLatencyFrames, wallClock: settings.clock)
        gate = StartGate(channels: channels, prerollFrames: settings.prerollFrames, triggerLevel: settings.triggerLevel,
                         waitsForStart: settings.waitsForStart)
        reader = CaptureReader(capture)
        silenceAlarm = SilenceAlarm(channels: channels, thresholdDBFS: settings.silenceThresholdDBFS,
                                    holdFrames: Int64(settings.silenceHoldSeconds * Double(sampleRate)))
    }

    /// Starts the disk thread.
    func start() {
        let thread = Thread { [self] in
            // Named for top(1) and the benchmark's per-thread CPU reading.
            Thread.current.name = "jas-record-disk"
            run()
        }
        thread.start()
    }

    /// The start command: record from this JACK frame time (minus the pre-roll).
    func requestStart(atFrame frame: UInt32) {
        startRequest.store(Int64(frame) + 1, ordering: .releasing)
    }

    /// Drains what is left, closes the files and returns once done.
    func stopAndWait(reason: String) {
        stopReason.withLock { $0 = $0 ?? reason }
        stopRequested.store(true, ordering: .releasing)
        reader.capture.wakeup.wakeNow()
        done.wait()
        // Stopped before its end: whoever waits for the end goes on too.
        finished.reach()
    }

    /// Ends the take now, for `reason` (the frames written so far are the take).
    func finish(reason: String) {
        stopReason.withLock { $0 = $0 ?? reason }
        // The disk thread writes nothing more and finalises the files at the stop.
        if ledger.finish() { finished.reach() }
    }

    /// Why the take ended (nil: it has not).
    var endReason: String? { stopReason.withLock { $0 } }

    /// The session was interrupted by `by`: the cycles stop until it is
    /// active again, and the frames missed then are the interruption's.
    func noteInterruption(by: String) {
        interruption.withLock { $0 = $0 ?? (by, MonotonicClock.nanoseconds) }
    }

    /// `ledger.position(ofFrameTime:)` once the cycle that starts at `frame`
    /// is written, and with it any gap before it (a stall's silence goes in
    /// when the first cycle after it is drained): waits for the disk thread's
    /// passes, at most `timeout` seconds, which only a server that runs no
    /// cycles makes it.
    func settledPosition(ofFrameTime frame: UInt32, timeout: Double = 0.5) -> Int64 {
        _ = passBell.wait(seconds: timeout) { ledger.hasWritten(past: frame) }
        return ledger.position(ofFrameTime: frame)
    }

    /// The longest the thread sleeps without the callback's word (seconds).
    static let idleWait = 0.1

    private func run() {
        // On the monotonic clock: stepped back, the wall clock would hold the
        // header updates back by the step (a crash meanwhile would leave a
        // header that says less than the file holds).
        var lastHeaderUpdate = ContinuousClock.now
        while true {
            beats.add(1, ordering: .relaxed)
            let stopping = stopRequested.load(ordering: .acquiring)
            let drained = drain()
            if drained > 0 { passBell.ring() }
            if ContinuousClock.now - lastHeaderUpdate >= .milliseconds(500) {
                fileSets.files?.updateHeaders()
                lastHeaderUpdate = .now
            }
            if stopping && drained == 0 {
                placeHeldCycles()
                break
            }
            if drained == 0 {
                endInterruptedTakeOnTime()
                // Woken by the callback (every `Recorder.wakeEveryFrames`); the
                // timeout ends an interrupted take on time (within a tenth of a
                // second) while no cycles run. It is longer than the callback's
                // cadence (21.3 ms at 256-frame periods): at 20 ms it ran out just
                // before each post, which doubled the thread's wake-ups (94 a
                // second where 47 were asked for) and drained the ring in halves.
                reader.capture.wakeup.wait(timeout: Self.idleWait)
            }
        }
        fileSets.finish(time: time)
        if let outage = diskFull.end() { noteUnwritten(outage, resumed: false) }
        passBell.ring()
        record(.stopped(framesWritten: ledger.framesWritten, reason: stopReason.withLock { $0 } ?? "stopped"))
        done.signal()
    }

    /// Processes every whole cycle waiting in the ring; returns how many.
    private func drain() -> Int {
        reader.drain { header, samples in handle(header, samples) }
    }

    private func handle(_ header: CycleHeader, _ samples: UnsafeBufferPointer<Float>) {
        if let floor = connectedFrom {
            if Int32(bitPattern: header.frameTime &- floor) < 0 { return }
            connectedFrom = nil
        }
        let placed = timeline.place(header)
        if placed.last?.wasHeld != false { heldFrames.append(Array(samples)) }
        for cycle in placed {
            if cycle.wasHeld {
                heldFrames.removeFirst().withUnsafeBufferPointer { process(cycle.cycle, $0, cycle.step) }
            } else {
                process(cycle.cycle, samples, cycle.step)
            }
        }
    }

    /// Processes the cycles the timeline holds back, as they stepped.
    private func placeHeldCycles() {
        for cycle in timeline.releaseHeld() {
            heldFrames.removeFirst().withUnsafeBufferPointer { process(cycle.cycle, $0, cycle.step) }
        }
    }

    /// Writes (or hands to the start gate) a cycle placed on the timeline.
    private func process(_ header: CycleHeader, _ samples: UnsafeBufferPointer<Float>, _ step: CaptureTimeline.Step) {
        let cycleClockFrame = observeClock(header, step)
        if case let .gap(frames, reason) = step {
            if ledger.isRecording {
                fillGap(frames: frames, reason: reason, resumedAt: header.frameTime, capturedAt: header.nanoseconds)
            } else {
                gate.noteGap(frames: frames, serverRestarted: reason == .serverRestart)
            }
        }
        if ledger.isFinished { return }
        if ledger.hasStarted {
            time.positionOffset = cycleClockFrame - ledger.framesWritten
            write(samples, frames: header.frames, startingAt: header.frameTime)
            return
        }
        let request = startRequest.load(ordering: .acquiring)
        let requested = request > 0 ? UInt32(truncatingIfNeeded: request - 1) : nil
        guard let offset = gate.admit(header, samples, requestedFrame: requested) else { return }
        begin(header, samples, offset: offset, clockFrame: cycleClockFrame)
    }

    /// Feeds the cycle to the take's time (steps and, every minute, the
    /// rate are logged); returns the cycle's first frame in the clock's count.
    private func observeClock(_ header: CycleHeader, _ step: CaptureTimeline.Step) -> Int64 {
        let observed = time.observe(header, step)
        if let seconds = observed.stepSeconds {
            record(.clockStep(seconds: seconds, atFrame: ledger.framesWritten))
            fileSets.keepOpenSetTime()
        }
        fileSets.reviseOpenSetTime(time: time)
        let ppm = time.frameClock.rateErrorPPM
        ledger.rateError(ppm: ppm)
        // Logged once measured, then every minute.
        let now = observed.reading.monotonicNanoseconds
        if let ppm, lastClockReport == 0 || now &- lastClockReport >= 60_000_000_000 {
            lastClockReport = now
            record(.clock(rateErrorPPM: ppm))
        }
        return observed.frame
    }

    /// The gate opened at `offset` of this cycle: the first set, the pre-roll, then the rest of the cycle.
    private func begin(_ header: CycleHeader, _ samples: UnsafeBufferPointer<Float>, offset: Int, clockFrame: Int64) {
        let opening = gate.open(header, samples, offset: offset)
        // Position 0 is the pre-roll's first frame.
        time.positionOffset = clockFrame + Int64(offset) - Int64(opening.prerollFrames)
        do throws(RecordingError) {
            try fileSets.begin(time: time)
        } catch {
            fail(error)
            return
        }
        ledger.started(firstFrameTime: opening.firstFrameTime, prerollFrames: opening.prerollFrames)
        record(.started(firstFrameTime: opening.firstFrameTime, prerollFrames: opening.prerollFrames))
        gate.releasePreroll { piece, frames in write(piece, frames: frames, startingAt: nil) }
        let rest = header.frames - offset
        write(UnsafeBufferPointer(rebasing: samples[(offset * channels)..<(header.frames * channels)]), frames: rest,
              startingAt: header.frameTime &+ UInt32(offset))
    }

    /// Writes frames (cut at the limit), measures their peaks and moves the anchor.
    private func write(_ samples: UnsafeBufferPointer<Float>, frames: Int, startingAt frameTime: UInt32?) {
        let allowed = ledger.allowedFrames(frames)
        guard allowed > 0 else { return }
        guard store(samples, frames: allowed) else { return }
        var peaks = [Float](repeating: 0, count: channels)
        peaks.withUnsafeMutableBufferPointer { peaks in
            var index = 0
            for _ in 0..<allowed {
                for channel in 0..<channels {
                    peaks[channel] = max(peaks[channel], abs(samples[index]))
                    index += 1
                }
            }
        }
        watchLevel(peaks, frames: allowed)
        if ledger.countWritten(allowed, peaks: peaks, endingAt: frameTime) { reachedLimit() }
    }

    /// Puts `frames` frames (nil: silence) into the files, starting a new set
    /// at each rotation boundary, so no frame is lost or repeated across
    /// files. False when writing failed (the take has stopped).
    private func store(_ samples: UnsafeBufferPointer<Float>?, frames: Int) -> Bool {
        if diskFull.isFull && !resumeWritingIfRoom() {
            countUnwritten(frames)
            return false
        }
        let start = ledger.framesWritten
        var done = 0
        while done < frames {
            if let untilCut = fileSets.framesUntilCut(at: start + Int64(done), time: time), untilCut <= 0 {
                guard openSet(at: start + Int64(done), reason: .rotation) else { return false }
            }
            guard let files = fileSets.files else { return false }
            let room = fileSets.framesUntilCut(at: start + Int64(done), time: time)
                .map { Int(min(Int64(frames - done), max(1, $0))) } ?? frames - done
            let inFilesBefore = files.framesWritten
            do {
                if let samples {
                    let chunk = UnsafeBufferPointer(rebasing: samples[(done * channels)..<((done + room) * channels)])
                    try files.write(chunk, frames: room)
                    settings.onWritten?(chunk, room)
                } else {
                    try files.writeSilence(frames: room)
                    settings.onWritten?(nil, room)
                }
            } catch {
                let partial = max(0, files.framesWritten - inFilesBefore)
                ledger.countWrittenBeforeFailure(done + Int(partial))
                if case .diskFull = error, !settings.stopsOnDiskFull {
                    stopWritingForRoom(path: files.paths[0])
                    countUnwritten(frames - done - Int(partial))
                } else {
                    fail(error)
                }
                return false
            }
            done += room
        }
        return true
    }

    /// Opens the next set of files at timeline position `position`; false
    /// when it could not be (the take has stopped).
    private func openSet(at position: Int64, reason: TakeFileSets.Reason) -> Bool {
        do throws(RecordingError) {
            try fileSets.open(at: position, reason: reason, time: time)
            return true
        } catch {
            fail(error)
            return false
        }
    }

    /// Feeds the dead-air alarm the peaks of frames about to be counted as written.
    private func watchLevel(_ peaks: [Float], frames: Int) {
        let at = ledger.framesWritten
        for change in silenceAlarm.observe(peaks: peaks, frames: frames, at: at) {
            switch change.kind {
            case .silence:
                record(.silence(channels: change.channels, levelDBFS: change.levelDBFS, atFrame: change.atFrame,
                                silentFrames: change.silentFrames))
            case .signal:
                record(.signal(channels: change.channels, levelDBFS: change.levelDBFS, atFrame: change.atFrame,
                               silentFrames: change.silentFrames))
            }
        }
    }

    /// A take with a duration that is interrupted (no cycles come) ends when
    /// its timeline is full by the wall clock: the rest is the interruption's
    /// silence, logged.
    private func endInterruptedTakeOnTime() {
        guard let limit = ledger.limitFrames, let current = interruption.withLock({ $0 }) else { return }
        // No cycles come while interrupted: the ones held back are placed.
        placeHeldCycles()
        guard ledger.isRecording else { return }
        let written = ledger.framesWritten
        let elapsed = Int64(Double(MonotonicClock.nanoseconds &- current.since) / 1e9 * Double(time.sampleRate))
        guard written + elapsed >= limit else { return }
        interruption.withLock { $0 = nil }
        writeInterruption(frames: Int(limit - written), by: current.by, resumedAt: nil)
    }

    /// Writes the silence of an interruption and logs it with who interrupted.
    private func writeInterruption(frames: Int, by: String, resumedAt frameTime: UInt32?) {
        let at = ledger.framesWritten
        writeGap(frames: frames, event: .interruptionGap(atFrame: at, frames: frames, by: by, resumedFrameTime: frameTime),
                 kind: .interruption, resumedAt: frameTime)
    }

    /// Writes silence for missing frames, so the timeline stays whole, and
    /// logs it; the cycle after the gap was captured at `nanoseconds`
    /// (CLOCK_MONOTONIC).
    private func fillGap(frames: Int, reason: CaptureTimeline.GapReason, resumedAt frameTime: UInt32,
                         capturedAt nanoseconds: UInt64) {
        // The cycles an interruption cost: the same server's clock ran on
        // while the session was inactive. The session had stopped before the
        // interruption was noted, so only a gap that ends in a cycle captured
        // after that is the interruption's. One that ended before (an xrun as
        // the interrupter joined, drained after the note) is a gap of its own:
        // taken for the interruption's, it was logged as 256 frames and the
        // interruption's 2 s as a plain gap (CI, RecordInterruptionTests).
        if reason == .discontinuity, let current = interruption.withLock({ value -> (by: String, since: UInt64)? in
            guard let noted = value, nanoseconds > noted.since else { return nil }
            value = nil
            return noted
        }) {
            writeInterruption(frames: frames, by: current.by, resumedAt: frameTime)
            return
        }
        if reason == .serverRestart {
            let rate = currentSampleRate()
            if rate > 0 && rate != time.sampleRate {
                // The gap is not written (the timeline's frames change rate
                // here): the set closes on the old clock, the next opens on a new one.
                time.positionOffset += Int64(frames)
                fileSets.close(time: time)
                timeline.restart(sampleRate: rate)
                time.restart(sampleRate: rate)
                _ = openSet(at: ledger.framesWritten, reason: .rateChange)
                return
            }
        }
        let at = ledger.framesWritten
        let kind: TakeLedger.GapKind = reason == .overrun ? .overrun
            : reason == .stall || reason == .serverRestart ? .clockStandStill : .other
        writeGap(frames: frames, event: .gap(atFrame: at, frames: frames, reason: reason.rawValue, resumedFrameTime: frameTime),
                 kind: kind, resumedAt: frameTime)
    }

    /// Logs `event`, writes `frames` of silence and counts them as a gap of
    /// `kind`; the timeline resumes at `frameTime` (nil: the take ends).
    private func writeGap(frames: Int, event: RecordingEvent, kind: TakeLedger.GapKind, resumedAt frameTime: UInt32?) {
        record(event)
        let allowed = ledger.allowedFrames(frames)
        let at = ledger.framesWritten
        if !diskFull.isFull, let reason = event.gapReason {
            ledger.noteGap(at: at, frames: allowed, reason: reason)
        }
        guard store(nil, frames: allowed) else { return }
        watchLevel([Float](repeating: 0, count: channels), frames: allowed)
        if ledger.countGap(at: at, frames: frames, written: allowed, kind: kind, resumedAt: frameTime) { reachedLimit() }
    }

    /// The timeline is as long as asked: the headers say so now, and whoever waits hears.
    private func reachedLimit() {
        fileSets.files?.updateHeaders()
        finished.reach()
    }

    // MARK: A full disk

    /// The disk is full: the open set is closed as it is (valid, in the
    /// manifest), and frames are counted, not written, until there is room.
    private func stopWritingForRoom(path: String) {
        let at = ledger.framesWritten
        record(.diskFull(atFrame: at, path: path))
        fileSets.close(time: time)
        diskFull.filled(at: at, path: path, now: MonotonicClock.nanoseconds)
        fileSets.settings.retention?.poke()
    }

    /// Frames that could not be written: on the timeline, in no file.
    private func countUnwritten(_ frames: Int) {
        diskFull.countUnwritten(frames)
        if ledger.countUnwritten(frames) { finished.reach() }
    }

    /// Once a second while the disk is full: with room for a few seconds
    /// again, a new set opens (named by its first frame) and the frames that
    /// could not be written are logged as a gap.
    private func resumeWritingIfRoom() -> Bool {
        guard diskFull.isFull else { return true }
        guard let folder = diskFull.folderToLookAt(now: MonotonicClock.nanoseconds), let space = FreeSpace(folder: folder),
              space.availableBytes >= FreeSpace.bytes(seconds: 2, sampleRate: time.sampleRate, channels: channels,
                                                      format: fileSets.settings.format),
              let outage = diskFull.end() else { return false }
        let opened = openSet(at: ledger.framesWritten, reason: .resume)
        noteUnwritten(outage, resumed: opened)
        return opened
    }

    /// Logs the frames a full disk cost, as a gap before the next set.
    private func noteUnwritten(_ full: DiskFullPolicy.Outage, resumed: Bool) {
        guard full.frames > 0 else { return }
        record(.unwrittenGap(atFrame: full.at, frames: full.frames, reason: "disk-full", resumed: resumed))
        if resumed { fileSets.noteUnwrittenBeforeNextSet(frames: full.frames) }
        ledger.countOutage(frames: full.frames)
    }

    private func fail(_ error: RecordingError) {
        let at = ledger.failed(error.description)
        record(.writeFailed(atFrame: at, reason: error.description))
        finished.reach()
    }
}
