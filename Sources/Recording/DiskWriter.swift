import Capture
import JackKit
import JackRuntime
import Foundation
import Synchronization

/// The disk thread of a recording: drains the capture ring, keeps the
/// timeline whole (silence for every missing frame, logged), holds the
/// pre-roll while armed, starts on the start command or the trigger, writes
/// the files and rewrites their headers every half second so that a crash
/// loses at most that much.
final class DiskWriter: @unchecked Sendable { // `connectedFrom` is the disk thread's own; shared state is in mutexes
    struct Settings {
        var naming: TakeNaming
        var format: RecordingFormat
        var prerollFrames: Int
        /// Linear sample level that starts the recording (nil: no trigger).
        var triggerLevel: Float?
        /// Whether to wait for `requestStart` (else start at the first frame or the trigger).
        var waitsForStart: Bool
        /// Frames to record, then stop (nil: until stopped).
        var limitFrames: Int64?
        /// Where a new set of files starts (nil: one set).
        var rotation: RotationRule?
        /// The wall clock names, `bext` and clock-aligned cuts are measured against.
        var clock: any WallClock = SystemWallClock()
        /// The time zone of names, `bext` and the clock's boundaries.
        var zone: RecordingTimeZone = .local
        /// Capture latency of the recorded ports, frames.
        var captureLatencyFrames: Int
        /// Whether an existing file may be replaced (`--overwrite`); else a
        /// later part skips a name that is taken.
        var overwrite = false
        /// Dead air: the level, dBFS, and how long below it makes a `silence` event.
        var silenceThresholdDBFS = -60.0
        var silenceHoldSeconds = 10.0
        /// The take's manifest (nil: none, a take to a device) and its retention.
        var catalogue: TakeCatalogue?
        var retention: RetentionKeeper?
        /// End the take when the disk is full, instead of waiting for room.
        var stopsOnDiskFull = false
        /// The first set's index (a restarted logger goes on from its manifest).
        var firstIndex = 1
        /// Hears what is written (nil: silence); see `Recorder.Configuration.onWritten`.
        var onWritten: (@Sendable (UnsafeBufferPointer<Float>?, Int) -> Void)?
    }

    /// Cycles before this JACK frame time ran before the ports were connected
    /// and are skipped (set once, before the thread starts).
    var connectedFrom: UInt32?

    /// What a progress display reads.
    struct Stats {
        var recording = false
        var finished = false
        var framesWritten: Int64 = 0
        var overruns = 0
        var overrunFrames: Int64 = 0
        var gaps = 0
        var gapFrames: Int64 = 0
        var interruptions = 0
        var interruptionFrames: Int64 = 0
        var xruns = 0
        var peaks: [Float]
        var firstFrameTime: UInt32?
        var prerollFrames = 0
        var timeReference: UInt64?
        var paths: [String]
        var problem: String?
        /// The last frame written: its JACK frame time and file position (to place xruns).
        var anchor: (frameTime: UInt32, position: Int64)?
        /// The silence written for the last time the server's clock stood
        /// still or started again (a stall, a restart): file positions.
        var lastClockGap: Range<Int64>?
        /// The sample clock's rate error against the wall clock (nil: not measured yet).
        var rateErrorPPM: Double?
        /// Frames of the timeline that could not be written (the disk was full): in no file.
        var unwrittenFrames: Int64 = 0
        /// The timeline so far: written frames and unwritten ones.
        var timelineFrames: Int64 { framesWritten + unwrittenFrames }
    }

    let capture: RealtimeCapture
    let settings: Settings
    /// Where events go: the sidecar log and the recorder's event stream.
    let record: @Sendable (RecordingEvent) -> Void
    /// The take's counters: written only here (the disk loop, and the
    /// recorder's reports through `countXruns` and `noteSourceGap`).
    private let stats: Mutex<Stats>
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
    /// Signalled once the recording reached its limit or failed.
    let finished = DispatchSemaphore(value: 0)

    // The disk thread's own state.
    /// The open set (nil: none yet, the first is named by its first frame).
    private var files: RecordingFiles?
    /// The open set's sample rate.
    private var sampleRate: Int
    /// Which set of files is open (1-based: rotations and rate changes).
    private var fileSet: Int
    /// The claims on the take's files (the first set's is the recorder's,
    /// with the log): each set's files are let go when the set closes.
    private var claims: [OutputClaim] = []
    /// Frames to UTC, measured from the cycles (see `FrameClock`).
    private var frameClock: FrameClock
    /// The clock's frame count: every cycle's frames and every gap's,
    /// continuous across the take (and before it, while armed).
    private var clockFrames: Int64 = 0
    /// `clockFrames` minus the timeline position of the same frame.
    private var positionOffset: Int64 = 0
    /// The open set's first timeline position and the UTC boundary it ends at (clock-aligned rotation).
    private var setStart: Int64 = 0
    private var nextCut: Double?
    /// When the clock's rate was last logged (monotonic nanoseconds).
    private var lastClockReport: UInt64 = 0
    /// The open set's first frame: UTC, the zone's offset, TimeReference.
    private var setUTC = 0.0
    private var setOffset = 0
    private var setReference: UInt64?
    /// The open set's first frame in the clock's count while its time is
    /// one the clock gave before it settled (nil: the time stands).
    private var provisionalSetFrame: Int64?
    /// How the open set's start was timed, for its closed line.
    private var setTimeBasis = ManifestLine.TimeBasis.settled
    /// Silence written for gaps (also noted from other threads: sources
    /// away), timeline positions, until the sets they fall in are catalogued.
    private let writtenGaps = Mutex<[ManifestLine.Gap]>([])
    /// The time a full disk cost before the open set (in no file).
    private var unwrittenBeforeSet: ManifestLine.Gap?
    /// While the disk is full: frames counted, not written, until there is room.
    private var diskFull = DiskFullPolicy()
    private var timeline: CaptureTimeline
    /// The frames of the cycles the timeline holds back, oldest first.
    private var heldFrames: [[Float]] = []
    private var history: PrerollHistory
    private let reader: CaptureReader
    private let channels: Int
    private var silenceAlarm: SilenceAlarm

    /// `files`: the first set, opened already (a plain name); nil: it is
    /// opened at the take's first frame, named by that frame's time.
    init(capture: RealtimeCapture, files: RecordingFiles?, claim: OutputClaim?, sampleRate: Int, settings: Settings,
         record: @escaping @Sendable (RecordingEvent) -> Void, currentSampleRate: @escaping @Sendable () -> Int) {
        claims = claim.map { [$0] } ?? []
        self.capture = capture
        self.files = files
        self.sampleRate = sampleRate
        self.settings = settings
        self.record = record
        self.currentSampleRate = currentSampleRate
        fileSet = settings.firstIndex
        channels = capture.channels
        timeline = CaptureTimeline(sampleRate: sampleRate)
        frameClock = FrameClock(sampleRate: sampleRate)
        history = PrerollHistory(channels: channels, capacityFrames: settings.prerollFrames)
        reader = CaptureReader(capture)
        stats = Mutex(Stats(peaks: [Float](repeating: 0, count: channels), paths: files?.paths ?? []))
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
    }

    /// Ends the take now, for `reason` (the frames written so far are the take).
    func finish(reason: String) {
        stopReason.withLock { $0 = $0 ?? reason }
        let ended = stats.withLock { stats -> Bool in
            defer { stats.finished = true }
            return !stats.finished
        }
        // The disk thread writes nothing more and finalises the files at the stop.
        if ended { finished.signal() }
    }

    /// Why the take ended (nil: it has not).
    var endReason: String? { stopReason.withLock { $0 } }

    /// The session was interrupted by `by`: the cycles stop until it is
    /// active again, and the frames missed then are the interruption's.
    func noteInterruption(by: String) {
        interruption.withLock { $0 = $0 ?? (by, MonotonicClock.nanoseconds) }
    }

    /// `position(ofFrameTime:)` once the cycle that starts at `frame` is
    /// written, and with it any gap before it (a stall's silence goes in when
    /// the first cycle after it is drained): waits for the disk thread's
    /// passes, at most `timeout` seconds, which only a server that runs no
    /// cycles makes it.
    func settledPosition(ofFrameTime frame: UInt32, timeout: Double = 0.5) -> Int64 {
        _ = passBell.wait(seconds: timeout) {
            stats.withLock { stats in stats.anchor.map { Int32(bitPattern: $0.frameTime &- frame) > 0 } ?? false }
        }
        return position(ofFrameTime: frame)
    }

    /// Where JACK frame time `frame` falls in the file (for xruns).
    func position(ofFrameTime frame: UInt32) -> Int64 {
        stats.withLock { stats in
            guard let anchor = stats.anchor else { return stats.framesWritten }
            return max(0, anchor.position + Int64(Int32(bitPattern: frame &- anchor.frameTime)))
        }
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
                files?.updateHeaders()
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
        closeSet()
        if let outage = diskFull.end() { noteUnwritten(outage, resumed: false) }
        claims.forEach { $0.release() }
        passBell.ring()
        let frames = stats.withLock { $0.framesWritten }
        record(.stopped(framesWritten: frames, reason: stopReason.withLock { $0 } ?? "stopped"))
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

    /// Writes (or keeps in the pre-roll) a cycle placed on the timeline.
    private func process(_ header: CycleHeader, _ samples: UnsafeBufferPointer<Float>, _ step: CaptureTimeline.Step) {
        let cycleClockFrame = observeClock(header, step)
        let recording = stats.withLock { $0.recording && !$0.finished }
        if case let .gap(frames, reason) = step {
            if recording {
                fillGap(frames: frames, reason: reason, resumedAt: header.frameTime, capturedAt: header.nanoseconds)
            } else if reason == .serverRestart {
                history.clear()
            } else {
                history.appendSilence(frames: frames)
            }
        }
        if stats.withLock({ $0.finished }) { return }
        if stats.withLock({ $0.recording }) {
            positionOffset = cycleClockFrame - stats.withLock { $0.framesWritten }
            write(samples, frames: header.frames, startingAt: header.frameTime)
            return
        }
        guard let offset = startOffset(header, samples) else {
            history.append(samples, frames: header.frames)
            return
        }
        begin(header, samples, offset: offset, clockFrame: cycleClockFrame)
    }

    /// Feeds the cycle and a wall-clock reading to the frame clock (steps
    /// and, every minute, the rate are logged); returns the cycle's first
    /// frame in the clock's count.
    private func observeClock(_ header: CycleHeader, _ step: CaptureTimeline.Step) -> Int64 {
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
        let reading = settings.clock.read()
        if case let .step(seconds) = frameClock.observeWallClock(reading) {
            record(.clockStep(seconds: seconds, atFrame: stats.withLock { $0.framesWritten }))
            // The open set's time stays on the wall clock it was read by.
            provisionalSetFrame = nil
        }
        reviseOpenSetTime()
        let ppm = frameClock.rateErrorPPM
        stats.withLock { $0.rateErrorPPM = ppm }
        // Logged once measured, then every minute.
        if let ppm, lastClockReport == 0 || reading.monotonicNanoseconds &- lastClockReport >= 60_000_000_000 {
            lastClockReport = reading.monotonicNanoseconds
            record(.clock(rateErrorPPM: ppm))
        }
        return frame
    }

    /// UTC of the sound at timeline position `position`: when it reached the
    /// input (its callback's time less the capture latency).
    private func utc(ofPosition position: Int64) -> Double {
        utc(ofClockFrame: position + positionOffset) ?? settings.clock.read().utc - captureLatency
    }

    /// UTC of the sound at the clock's frame `frame` by the frame clock (nil before it is ready).
    private func utc(ofClockFrame frame: Int64) -> Double? {
        frameClock.utc(ofFrame: Double(frame)).map { $0 - captureLatency }
    }

    /// The recorded ports' capture latency, seconds.
    private var captureLatency: Double { Double(settings.captureLatencyFrames) / Double(sampleRate) }

    /// Where in this cycle the recording starts, if it does.
    private func startOffset(_ header: CycleHeader, _ samples: UnsafeBufferPointer<Float>) -> Int? {
        if let level = settings.triggerLevel {
            var index = 0
            while index < header.frames * channels {
                if abs(samples[index]) >= level { return index / channels }
                index += 1
            }
            return nil
        }
        if !settings.waitsForStart { return 0 }
        let request = startRequest.load(ordering: .acquiring)
        guard request > 0 else { return nil }
        let offset = Int(Int32(bitPattern: UInt32(truncatingIfNeeded: request - 1) &- header.frameTime))
        if offset >= header.frames { return nil }
        return max(0, offset)
    }

    /// Starts the file: the pre-roll, then this cycle from `offset`.
    private func begin(_ header: CycleHeader, _ samples: UnsafeBufferPointer<Float>, offset: Int, clockFrame: Int64) {
        // The pre-roll is the history plus the part of this cycle before the start.
        history.append(UnsafeBufferPointer(rebasing: samples[0..<(offset * channels)]), frames: offset)
        let preroll = min(settings.prerollFrames, history.count)
        let firstFrame = header.frameTime &+ UInt32(offset) &- UInt32(preroll)
        // Position 0 is the pre-roll's first frame.
        positionOffset = clockFrame + Int64(offset) - Int64(preroll)
        if files == nil {
            openSet(at: 0, sampleRate: sampleRate, reason: .first)
            guard files != nil else { return }
        } else {
            describeOpenSet(at: 0)
        }
        let timeReference = stats.withLock { $0.timeReference }
        stats.withLock {
            $0.recording = true
            $0.firstFrameTime = firstFrame
            $0.prerollFrames = preroll
            $0.timeReference = timeReference
            $0.anchor = (firstFrame, 0)
        }
        record(.started(firstFrameTime: firstFrame, prerollFrames: preroll))
        history.withNewest(preroll) { piece, frames in
            write(piece, frames: frames, startingAt: nil)
        }
        history.clear()
        let rest = header.frames - offset
        write(UnsafeBufferPointer(rebasing: samples[(offset * channels)..<(header.frames * channels)]), frames: rest,
              startingAt: header.frameTime &+ UInt32(offset))
    }

    /// Writes frames (cut at the limit), measures their peaks and moves the anchor.
    private func write(_ samples: UnsafeBufferPointer<Float>, frames: Int, startingAt frameTime: UInt32?) {
        let allowed = allowedFrames(frames)
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
        advance(by: allowed) { stats in
            for channel in 0..<channels { stats.peaks[channel] = max(stats.peaks[channel], peaks[channel]) }
            if let frameTime { stats.anchor = (frameTime &+ UInt32(allowed), stats.framesWritten + Int64(allowed)) }
        }
    }

    /// Puts `frames` frames (nil: silence) into the files, starting a new set
    /// at each rotation boundary, so no frame is lost or repeated across
    /// files. False when writing failed (the take has stopped).
    private func store(_ samples: UnsafeBufferPointer<Float>?, frames: Int) -> Bool {
        if diskFull.isFull && !resumeWritingIfRoom() {
            countUnwritten(frames)
            return false
        }
        let start = stats.withLock { $0.framesWritten }
        var done = 0
        while done < frames {
            if let untilCut = framesUntilCut(at: start + Int64(done)), untilCut <= 0 {
                openSet(at: start + Int64(done), sampleRate: sampleRate, reason: .rotation)
                if stats.withLock({ $0.problem != nil }) { return false }
            }
            guard let files else { return false }
            let room = framesUntilCut(at: start + Int64(done)).map { Int(min(Int64(frames - done), max(1, $0))) }
                ?? frames - done
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
                // What reached the files before the failure (a full disk
                // takes part of a write) is on the timeline: the summary
                // says what the files hold.
                let partial = max(0, files.framesWritten - inFilesBefore)
                stats.withLock { $0.framesWritten += Int64(done) + partial }
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

    /// Feeds the dead-air alarm the peaks of frames about to be counted as written.
    private func watchLevel(_ peaks: [Float], frames: Int) {
        let at = stats.withLock { $0.framesWritten }
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
        guard let limit = settings.limitFrames, let current = interruption.withLock({ $0 }) else { return }
        // No cycles come while interrupted: the ones held back are placed.
        placeHeldCycles()
        let (written, recording) = stats.withLock { ($0.framesWritten, $0.recording && !$0.finished) }
        guard recording else { return }
        let elapsed = Int64(Double(MonotonicClock.nanoseconds &- current.since) / 1e9 * Double(sampleRate))
        guard written + elapsed >= limit else { return }
        interruption.withLock { $0 = nil }
        writeInterruption(frames: Int(limit - written), by: current.by, resumedAt: nil)
    }

    /// Writes the silence of an interruption and logs it with who interrupted.
    private func writeInterruption(frames: Int, by: String, resumedAt frameTime: UInt32?) {
        let at = stats.withLock { $0.framesWritten }
        writeGap(frames: frames, event: .interruptionGap(atFrame: at, frames: frames, by: by, resumedFrameTime: frameTime),
                 resumedAt: frameTime) { stats in
            stats.interruptions += 1
            stats.interruptionFrames += Int64(frames)
        }
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
            if rate > 0 && rate != sampleRate {
                // The gap is not written (the timeline's frames change rate here).
                positionOffset += Int64(frames)
                openSet(at: stats.withLock { $0.framesWritten }, sampleRate: rate, reason: .rateChange)
                return
            }
        }
        let at = stats.withLock { $0.framesWritten }
        writeGap(frames: frames, event: .gap(atFrame: at, frames: frames, reason: reason.rawValue, resumedFrameTime: frameTime),
                 resumedAt: frameTime) { stats in
            if reason == .overrun {
                stats.overruns += 1
                stats.overrunFrames += Int64(frames)
            }
            if reason == .stall || reason == .serverRestart { stats.lastClockGap = at..<(at + Int64(frames)) }
        }
    }

    /// Closes the open set and catalogues it: frames, end, gaps, SHA-256.
    private func closeSet() {
        guard let closing = files else { return }
        closing.close()
        files = nil
        for writer in closing.writers {
            if let loudness = writer.loudness { record(.fileLoudness(path: writer.path, loudness)) }
        }
        for claim in claims { claim.release(paths: closing.paths) }
        let frames = closing.framesWritten
        let (start, end) = (setStart, setStart + frames)
        // Each gap's part in this set (one that goes on is kept for the next).
        let gaps = [unwrittenBeforeSet].compactMap { $0 } + writtenGaps.withLock { written in
            defer { written.removeAll { $0.atFrame + $0.frames <= end } }
            return written.compactMap { gap in
                let (from, to) = (max(gap.atFrame, start), min(gap.atFrame + gap.frames, end))
                return to > from ? ManifestLine.Gap(atFrame: from - start, frames: to - from, reason: gap.reason, written: true) : nil
            }
        }
        unwrittenBeforeSet = nil
        guard let catalogue = settings.catalogue else { return }
        let endUTC = utc(ofPosition: end)
        for writer in closing.writers {
            catalogue.closed(writer.path, index: fileSet, startUTC: setUTC, endUTC: endUTC, utcOffset: setOffset,
                             sampleRate: closing.sampleRate, channels: writer.channels, frames: frames,
                             timeReference: setReference, gaps: gaps, loudness: writer.loudness, timeBasis: setTimeBasis)
        }
    }

    /// Logs `event`, writes `frames` of silence and counts them as a gap
    /// (and as `count` says); the timeline resumes at `frameTime` (nil: the take ends).
    private func writeGap(frames: Int, event: RecordingEvent, resumedAt frameTime: UInt32?,
                          count: (inout Stats) -> Void) {
        record(event)
        let allowed = allowedFrames(frames)
        let at = stats.withLock { $0.framesWritten }
        if !diskFull.isFull, let reason = event.gapReason {
            noteGap(at: at, frames: allowed, reason: reason)
        }
        guard store(nil, frames: allowed) else { return }
        watchLevel([Float](repeating: 0, count: channels), frames: allowed)
        advance(by: allowed) { stats in
            stats.gaps += 1
            stats.gapFrames += Int64(frames)
            count(&stats)
            if let frameTime { stats.anchor = (frameTime, stats.framesWritten + Int64(allowed)) }
        }
    }

    /// Frames from timeline position `position` to the open set's cut (nil: no rotation).
    private func framesUntilCut(at position: Int64) -> Int64? {
        switch settings.rotation {
        case nil: return nil
        case let .everyFrames(frames)?: return setStart + frames - position
        case .onClock?:
            // The frame whose sound's wall time is nearest the boundary.
            guard let nextCut else { return nil }
            guard let frame = frameClock.frame(atUTC: nextCut + captureLatency) else { return nil }
            return Int64(frame.rounded()) - positionOffset - position
        }
    }

    /// Why a set of files opens.
    private enum SetReason { case first, rotation, rateChange, resume }

    /// Closes the open set and opens the next at timeline position `position`:
    /// the take's first, a rotation's, or one at the rate the server came back at.
    private func openSet(at position: Int64, sampleRate rate: Int, reason: SetReason) {
        closeSet()
        settings.retention?.poke()
        if reason == .rateChange {
            timeline.restart(sampleRate: rate)
            frameClock = FrameClock(sampleRate: rate)
        }
        sampleRate = rate
        let utc = utc(ofPosition: position)
        if reason != .first { fileSet += 1 }
        do throws(RecordingError) {
            // Claimed as the first set was: a name that is taken (a file left
            // from an earlier take, another recorder's) is skipped, never replaced.
            var refusals: [String] = []
            var paths: [String] = []
            while true {
                paths = settings.naming.paths(index: fileSet, utc: utc, attempt: refusals.count)
                do {
                    try Self.makeFolders(for: paths)
                    claims.append(try OutputClaim.claim(paths: paths, logPath: nil, overwrite: settings.overwrite))
                    break
                } catch {
                    // A name that is taken: the next; anything else (a folder that cannot be made) ends here.
                    switch error {
                    case .outputExists, .outputBusy: refusals.append(error.description)
                    default: throw error
                    }
                    if refusals.count >= 100 { throw .noFreeName(refusals: refusals) }
                }
            }
            for refusal in refusals { record(.partSkipped(reason: refusal)) }
            files = try RecordingFiles(paths: paths, channels: channels, sampleRate: rate, format: settings.format)
        } catch {
            files = nil
            fail(error)
            return
        }
        describeOpenSet(at: position)
        let path = files?.paths[0] ?? ""
        stats.withLock { $0.paths += files?.paths ?? [] }
        switch reason {
        case .first: break
        case .rotation: record(.rotated(path: path, atFrame: position))
        case .rateChange: record(.newFile(path: path, sampleRate: rate, atFrame: position))
        case .resume: record(.rotated(path: path, atFrame: position))
        }
    }

    /// Creates the folders a set's paths need (a pattern with a folder per day).
    static func makeFolders(for paths: [String]) throws(RecordingError) {
        for path in paths {
            let folder = (path as NSString).deletingLastPathComponent
            guard !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) else { continue }
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw .unwritablePath(path: path, reason: "cannot create the folder '\(folder)': \(error.localizedDescription)")
            }
        }
    }

    /// The open set begins at timeline position `position`: its `bext`
    /// (origination time and TimeReference from its first frame's wall
    /// time, samples since that day's midnight in the take's zone) and,
    /// rotating on the clock, the boundary it ends at.
    private func describeOpenSet(at position: Int64) {
        guard let files else { return }
        setStart = position
        let utc = utc(ofPosition: position)
        let zone = settings.zone
        let (named, reference) = stampOpenSet(utc)
        provisionalSetFrame = frameClock.isSettled ? nil : position + positionOffset
        setTimeBasis = frameClock.isSettled ? .settled : .unsettled
        for writer in files.writers {
            settings.catalogue?.opened(writer.path, index: fileSet, startUTC: utc, utcOffset: setOffset,
                                       sampleRate: sampleRate, channels: writer.channels)
        }
        if case let .onClock(period)? = settings.rotation {
            // Past this set's own first frame (a cut lies within half a frame of its boundary).
            nextCut = zone.nextBoundary(after: utc + 1 / Double(sampleRate), period: period)
            // Never a cut at or before the set's first frame (no empty file, whatever the clock did).
            while let cut = framesUntilCut(at: position), cut <= 0, let boundary = nextCut {
                nextCut = zone.nextBoundary(after: boundary, period: period)
            }
        }
        if settings.format.container.carriesBroadcastExtension {
            files.setBroadcastExtension(timeReference: reference, origination: named, zone: zone,
                                        description: "jas record, \(channels) channel(s) at \(sampleRate) Hz")
            if position == 0 { stats.withLock { $0.timeReference = reference } }
        }
    }

    /// The open set's first frame's time: its origination time (the
    /// millisecond, as in names) and TimeReference (samples since that
    /// day's midnight in the take's zone; a cut half a frame before midnight
    /// belongs to the new day, at 0).
    private func stampOpenSet(_ utc: Double) -> (named: Double, reference: UInt64) {
        let named = (utc * 1000).rounded() / 1000
        let midnight = named - settings.zone.secondsOfDay(at: named)
        let reference = UInt64(max(0, ((utc - midnight) * Double(sampleRate)).rounded()))
        setUTC = utc
        setOffset = settings.zone.offset(at: named)
        setReference = settings.format.container.carriesBroadcastExtension ? reference : nil
        return (named, reference)
    }

    /// Measures the open set's first frame's time again once the frame
    /// clock has settled, if it had not when the set began: the clock tells
    /// a jump of the server's clock from late callbacks only `jumpReadings`
    /// cycles after it, so a set that began in between was timed on the line
    /// before the jump. A line that began after the set's first frame leaves
    /// its time as it was. The files' `bext` gets the new time at close; the
    /// manifest's `opened` line keeps the first reading, its `closed` line
    /// has the new one.
    private func reviseOpenSetTime() {
        guard let frame = provisionalSetFrame else { return }
        if let lineStart = frameClock.lineStart, lineStart > frame {
            provisionalSetFrame = nil
            setTimeBasis = .kept
            return
        }
        guard frameClock.isSettled, let files, let utc = utc(ofClockFrame: frame) else { return }
        provisionalSetFrame = nil
        setTimeBasis = .revised
        let (named, reference) = stampOpenSet(utc)
        guard settings.format.container.carriesBroadcastExtension else { return }
        files.reviseOrigination(named, zone: settings.zone, timeReference: reference)
        if setStart == 0 { stats.withLock { $0.timeReference = reference } }
    }

    private func allowedFrames(_ frames: Int) -> Int {
        guard let limit = settings.limitFrames else { return frames }
        return Int(max(0, min(Int64(frames), limit - stats.withLock { $0.timelineFrames })))
    }

    // MARK: A full disk

    /// The disk is full: the open set is closed as it is (valid, in the
    /// manifest), and frames are counted, not written, until there is room.
    private func stopWritingForRoom(path: String) {
        let at = stats.withLock { $0.framesWritten }
        record(.diskFull(atFrame: at, path: path))
        closeSet()
        diskFull.filled(at: at, path: path, now: MonotonicClock.nanoseconds)
        settings.retention?.poke()
    }

    /// Frames that could not be written: on the timeline, in no file.
    private func countUnwritten(_ frames: Int) {
        guard frames > 0 else { return }
        diskFull.countUnwritten(frames)
        let reachedLimit = stats.withLock { stats -> Bool in
            stats.unwrittenFrames += Int64(frames)
            if let limit = settings.limitFrames, stats.timelineFrames >= limit, !stats.finished {
                stats.finished = true
                return true
            }
            return false
        }
        if reachedLimit { finished.signal() }
    }

    /// Once a second while the disk is full: with room for a few seconds
    /// again, a new set opens (named by its first frame) and the frames that
    /// could not be written are logged as a gap.
    private func resumeWritingIfRoom() -> Bool {
        guard diskFull.isFull else { return true }
        guard let folder = diskFull.folderToLookAt(now: MonotonicClock.nanoseconds), let space = FreeSpace(folder: folder),
              space.availableBytes >= FreeSpace.bytes(seconds: 2, sampleRate: sampleRate, channels: channels,
                                                      format: settings.format),
              let outage = diskFull.end() else { return false }
        openSet(at: stats.withLock { $0.framesWritten }, sampleRate: sampleRate, reason: .resume)
        noteUnwritten(outage, resumed: files != nil)
        return files != nil
    }

    /// Logs the frames a full disk cost, as a gap before the next set.
    private func noteUnwritten(_ full: DiskFullPolicy.Outage, resumed: Bool) {
        guard full.frames > 0 else { return }
        record(.unwrittenGap(atFrame: full.at, frames: full.frames, reason: "disk-full", resumed: resumed))
        if resumed { unwrittenBeforeSet = ManifestLine.Gap(atFrame: 0, frames: full.frames, reason: "disk-full", written: false) }
        stats.withLock {
            $0.gaps += 1
            $0.gapFrames += full.frames
        }
    }

    /// A gap noted elsewhere (recorded ports away), at timeline position `at`: for the manifest.
    private func noteGap(at: Int64, frames: Int, reason: String) {
        writtenGaps.withLock { $0.append(ManifestLine.Gap(atFrame: at, frames: Int64(frames), reason: reason, written: true)) }
    }

    /// The counters as they are now.
    var snapshot: Stats { stats.withLock { $0 } }

    /// Counts `count` xruns the server reported, if the take is recording
    /// (not armed, not finished); whether it counted them.
    func countXruns(_ count: Int) -> Bool {
        stats.withLock { stats in
            let counts = stats.recording && !stats.finished
            if counts { stats.xruns += count }
            return counts
        }
    }

    /// Sources gone from file position `at` and back at `end`, found by the
    /// source watch: a gap of the take, counted and listed for the manifest;
    /// where it was placed. Sources gone while the server's clock stood
    /// still (a netjack2 slave's ports, made anew when its master returns)
    /// are gone from where that silence, already logged, ends.
    func noteSourceGap(from at: Int64, to end: Int64) -> (at: Int64, frames: Int) {
        let gap = stats.withLock { stats -> (at: Int64, frames: Int) in
            var start = at
            if let stood = stats.lastClockGap, stood.lowerBound >= start, stood.upperBound <= end { start = stood.upperBound }
            let frames = Int(max(0, end - start))
            stats.gaps += 1
            stats.gapFrames += Int64(frames)
            return (start, frames)
        }
        noteGap(at: gap.at, frames: gap.frames, reason: "source-lost")
        return gap
    }

    private func advance(by frames: Int, _ update: (inout Stats) -> Void) {
        let reachedLimit = stats.withLock { stats -> Bool in
            update(&stats)
            stats.framesWritten += Int64(frames)
            if let limit = settings.limitFrames, stats.timelineFrames >= limit, !stats.finished {
                stats.finished = true
                return true
            }
            return false
        }
        if reachedLimit {
            files?.updateHeaders()
            finished.signal()
        }
    }

    private func fail(_ error: RecordingError) {
        let at = stats.withLock { stats -> Int64 in
            stats.problem = error.description
            stats.finished = true
            return stats.framesWritten
        }
        record(.writeFailed(atFrame: at, reason: error.description))
        finished.signal()
    }

    /// Highest peaks since the last call, reset.
    func takePeaks() -> [Float] {
        stats.withLock { stats in
            defer { stats.peaks = [Float](repeating: 0, count: channels) }
            return stats.peaks
        }
    }
}
