import Capture
import JackKit
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
        /// Frames per file: a new set of files starts at every multiple (nil: one set).
        var rotateFrames: Int64?
        /// Capture latency of the recorded ports, frames.
        var captureLatencyFrames: Int
        /// Whether an existing file may be replaced (`--overwrite`); else a
        /// later part skips a name that is taken.
        var overwrite = false
        /// Dead air: the level, dBFS, and how long below it makes a `silence` event.
        var silenceThresholdDBFS = -60.0
        var silenceHoldSeconds = 10.0
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
    }

    let capture: RealtimeCapture
    let settings: Settings
    /// Where events go: the sidecar log and the recorder's event stream.
    let record: @Sendable (RecordingEvent) -> Void
    let stats: Mutex<Stats>
    /// Why the recording ends, for the log's last line.
    private let stopReason = Mutex<String?>(nil)
    /// The interruption under way: who, and since when (wall clock). Its gap
    /// is written when capture resumes, or at the take's end: a `--for` take
    /// ends on time however long it lasts.
    private let interruption = Mutex<(by: String, since: Date)?>(nil)
    /// The current sample rate of the server (read at a restart).
    let currentSampleRate: @Sendable () -> Int
    /// JACK frame time of the start command, +1 (0: none yet).
    private let startRequest = Atomic<Int64>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    /// Signalled once the recording reached its limit or failed.
    let finished = DispatchSemaphore(value: 0)

    // The disk thread's own state.
    private var files: RecordingFiles
    /// Which set of files is open (1-based: rotations and rate changes).
    private var fileSet = 1
    /// Frames in the open set.
    private var framesInSet: Int64 = 0
    /// The claims on the later sets' files, held until the take ends.
    private var laterClaims: [OutputClaim] = []
    /// Wall-clock time and bext time reference of the take's first frame (for later sets').
    private var firstFrameDate: Date?
    private var firstTimeReference: UInt64 = 0
    /// Whether a set was opened at another rate (timeline frames then mix rates).
    private var rateChanged = false
    private var timeline: CaptureTimeline
    private var history: PrerollHistory
    private let reader: CaptureReader
    private let channels: Int
    private var silenceAlarm: SilenceAlarm

    init(capture: RealtimeCapture, files: RecordingFiles, settings: Settings,
         record: @escaping @Sendable (RecordingEvent) -> Void, currentSampleRate: @escaping @Sendable () -> Int) {
        self.capture = capture
        self.files = files
        self.settings = settings
        self.record = record
        self.currentSampleRate = currentSampleRate
        channels = capture.channels
        timeline = CaptureTimeline(sampleRate: files.sampleRate)
        history = PrerollHistory(channels: channels, capacityFrames: settings.prerollFrames)
        reader = CaptureReader(capture)
        stats = Mutex(Stats(peaks: [Float](repeating: 0, count: channels), paths: files.paths))
        silenceAlarm = SilenceAlarm(channels: channels, thresholdDBFS: settings.silenceThresholdDBFS,
                                    holdFrames: Int64(settings.silenceHoldSeconds * Double(files.sampleRate)))
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
        interruption.withLock { $0 = $0 ?? (by, Date()) }
    }

    /// `position(ofFrameTime:)` once the cycle that starts at `frame` is
    /// written, and with it any gap before it (a stall's silence goes in when
    /// the first cycle after it is drained): waits for the disk thread, at
    /// most `timeout` seconds, which only a server that runs no cycles makes it.
    func settledPosition(ofFrameTime frame: UInt32, timeout: Double = 0.5) -> Int64 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let written = stats.withLock { stats in
                stats.anchor.map { Int32(bitPattern: $0.frameTime &- frame) > 0 } ?? false
            }
            if written { break }
            usleep(2_000)
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

    private func run() {
        var lastHeaderUpdate = Date()
        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            let drained = drain()
            if Date().timeIntervalSince(lastHeaderUpdate) >= 0.5 {
                files.updateHeaders()
                lastHeaderUpdate = Date()
            }
            if stopping && drained == 0 { break }
            if drained == 0 {
                endInterruptedTakeOnTime()
                usleep(5_000)
            }
        }
        files.close()
        laterClaims.forEach { $0.release() }
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
        let step = timeline.step(header)
        let recording = stats.withLock { $0.recording && !$0.finished }
        if case let .gap(frames, reason) = step {
            if recording {
                fillGap(frames: frames, reason: reason, resumedAt: header.frameTime)
            } else if reason == .serverRestart {
                history.clear()
            } else {
                history.appendSilence(frames: frames)
            }
        }
        if stats.withLock({ $0.finished }) { return }
        if stats.withLock({ $0.recording }) {
            write(samples, frames: header.frames, startingAt: header.frameTime)
            return
        }
        guard let offset = startOffset(header, samples) else {
            history.append(samples, frames: header.frames)
            return
        }
        begin(header, samples, offset: offset)
    }

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
    private func begin(_ header: CycleHeader, _ samples: UnsafeBufferPointer<Float>, offset: Int) {
        // The pre-roll is the history plus the part of this cycle before the start.
        history.append(UnsafeBufferPointer(rebasing: samples[0..<(offset * channels)]), frames: offset)
        let preroll = min(settings.prerollFrames, history.count)
        let firstFrame = header.frameTime &+ UInt32(offset) &- UInt32(preroll)
        let rate = files.sampleRate
        // Wall-clock time of the first frame, less the capture latency: when the sound reached the input.
        let nowWall = Date()
        let ageSeconds = Double(Int64(MonotonicClock.nanoseconds) - Int64(header.nanoseconds)) / 1e9
        let firstFrameDate = nowWall.addingTimeInterval(-ageSeconds + Double(offset - preroll) / Double(rate)
                                                        - Double(settings.captureLatencyFrames) / Double(rate))
        let midnight = Calendar.current.startOfDay(for: firstFrameDate)
        let timeReference = UInt64(max(0, firstFrameDate.timeIntervalSince(midnight) * Double(rate)).rounded())
        self.firstFrameDate = firstFrameDate
        firstTimeReference = timeReference
        describe(files, timeReference: timeReference, originationDate: firstFrameDate)
        stats.withLock {
            $0.recording = true
            $0.firstFrameTime = firstFrame
            $0.prerollFrames = preroll
            $0.timeReference = settings.format.container.carriesBroadcastExtension ? timeReference : nil
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
        let start = stats.withLock { $0.framesWritten }
        var done = 0
        while done < frames {
            if let rotate = settings.rotateFrames, framesInSet >= rotate {
                openNextSet(sampleRate: files.sampleRate, at: start + Int64(done))
                if stats.withLock({ $0.problem != nil }) { return false }
            }
            let room = settings.rotateFrames.map { Int(min(Int64(frames - done), $0 - framesInSet)) } ?? frames - done
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
                fail(error)
                return false
            }
            framesInSet += Int64(room)
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
        let (written, recording) = stats.withLock { ($0.framesWritten, $0.recording && !$0.finished) }
        guard recording else { return }
        let elapsed = Int64(Date().timeIntervalSince(current.since) * Double(files.sampleRate))
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

    /// Writes silence for missing frames, so the timeline stays whole, and logs it.
    private func fillGap(frames: Int, reason: CaptureTimeline.GapReason, resumedAt frameTime: UInt32) {
        // The cycles an interruption cost: the same server's clock ran on
        // while the session was inactive.
        if reason == .discontinuity, let current = interruption.withLock({ value in defer { value = nil }; return value }) {
            writeInterruption(frames: frames, by: current.by, resumedAt: frameTime)
            return
        }
        if reason == .serverRestart {
            let rate = currentSampleRate()
            if rate > 0 && rate != files.sampleRate {
                openNextSet(sampleRate: rate, at: nil)
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

    /// Logs `event`, writes `frames` of silence and counts them as a gap
    /// (and as `count` says); the timeline resumes at `frameTime` (nil: the take ends).
    private func writeGap(frames: Int, event: RecordingEvent, resumedAt frameTime: UInt32?,
                          count: (inout Stats) -> Void) {
        record(event)
        let allowed = allowedFrames(frames)
        guard store(nil, frames: allowed) else { return }
        watchLevel([Float](repeating: 0, count: channels), frames: allowed)
        advance(by: allowed) { stats in
            stats.gaps += 1
            stats.gapFrames += Int64(frames)
            count(&stats)
            if let frameTime { stats.anchor = (frameTime, stats.framesWritten + Int64(allowed)) }
        }
    }

    /// Closes these files and opens the next set: at a rotation boundary
    /// (timeline frame `boundary`), or at another sample rate when the server
    /// came back at one (`boundary` nil: the frames written so far).
    private func openNextSet(sampleRate: Int, at boundary: Int64?) {
        files.close()
        let rotation = boundary != nil
        let at = boundary ?? stats.withLock { $0.framesWritten }
        let rate = Double(sampleRate)
        // The set's first frame by the take's clock: its name's time and its bext time reference.
        let offset = Double(at) / Double(files.sampleRate)
        let date = firstFrameDate.map { $0.addingTimeInterval(offset) } ?? Date()
        fileSet += 1
        do throws(RecordingError) {
            // Claimed as the first set was: a name that is taken (a file left
            // from an earlier take, another recorder's) is skipped, never replaced.
            var refusals: [String] = []
            var paths: [String] = []
            while true {
                paths = settings.naming.paths(index: fileSet, date: date, attempt: refusals.count)
                do {
                    laterClaims.append(try OutputClaim.claim(paths: paths, logPath: nil, overwrite: settings.overwrite))
                    break
                } catch {
                    refusals.append(error.description)
                    if refusals.count >= 100 {
                        throw .noFreeName(refusals: refusals)
                    }
                }
            }
            for refusal in refusals { record(.partSkipped(reason: refusal)) }
            files = try RecordingFiles(paths: paths, channels: channels, sampleRate: sampleRate, format: settings.format)
        } catch {
            fail(error)
            return
        }
        framesInSet = 0
        if let firstFrameDate {
            // Samples since midnight at the set's own rate: while the rate
            // never changed, exactly the first frame's plus the frames since.
            if !rotation { rateChanged = true }
            let midnight = Calendar.current.startOfDay(for: firstFrameDate)
            let reference = rateChanged ? UInt64(max(0, date.timeIntervalSince(midnight) * rate).rounded())
                : firstTimeReference + UInt64(at)
            describe(files, timeReference: reference, originationDate: date)
        }
        stats.withLock { $0.paths += files.paths }
        if rotation {
            record(.rotated(path: files.paths[0], atFrame: at))
        } else {
            timeline.restart(sampleRate: sampleRate)
            record(.newFile(path: files.paths[0], sampleRate: sampleRate, atFrame: at))
        }
    }

    /// The Broadcast WAV description of a set whose first frame is at `timeReference`.
    private func describe(_ files: RecordingFiles, timeReference: UInt64, originationDate: Date) {
        guard settings.format.container.carriesBroadcastExtension else { return }
        files.setBroadcastExtension(timeReference: timeReference, originationDate: originationDate,
                                    description: "jas record, \(channels) channel(s) at \(files.sampleRate) Hz")
    }

    private func allowedFrames(_ frames: Int) -> Int {
        guard let limit = settings.limitFrames else { return frames }
        return Int(max(0, min(Int64(frames), limit - stats.withLock { $0.framesWritten })))
    }

    private func advance(by frames: Int, _ update: (inout Stats) -> Void) {
        let reachedLimit = stats.withLock { stats -> Bool in
            update(&stats)
            stats.framesWritten += Int64(frames)
            if let limit = settings.limitFrames, stats.framesWritten >= limit, !stats.finished {
                stats.finished = true
                return true
            }
            return false
        }
        if reachedLimit {
            files.updateHeaders()
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
