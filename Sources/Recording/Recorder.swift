import JackAudioSession
import Capture
import Foundation
import JackKit
import Synchronization

/// A multichannel recording that loses nothing: an input-only, mixable,
/// measurement-mode session (no DSP: the JACK buffers themselves) whose
/// real-time callback only copies into a ring, and a disk thread that writes
/// files through libsndfile. Overruns and server restarts become logged
/// silence of the right length; headers are rewritten every half second, so
/// a crash leaves a file that opens; pre-roll and trigger start it early or
/// on a level.
///
/// Use: `prepare()` (every check, before anything starts; capture begins,
/// armed), which returns the `RunningTake`; `start()` when waiting for a
/// start command; `take.finished()` or `waitUntilFinished`; `stop()`, then
/// `summary`.
public final class Recorder: @unchecked Sendable { // `capture` and `writer` are set while preparing, before the workers that read them start
    /// What the recording was asked to do.
    public let configuration: Configuration
    /// The ports the take listens to, and its session.
    private let tap: TapSession
    /// The recording session.
    public var session: AudioSession { tap.session }
    private let events: AsyncStream<RecordingEvent>.Continuation
    /// Everything that happens to the recording, as it happens (also in the sidecar log).
    public let eventStream: AsyncStream<RecordingEvent>
    private var capture: RealtimeCapture? { tap.capture }
    private var writer: DiskWriter?
    private var log: RecordingLog?
    /// The first file's name as written (the pattern filled in) and the take's log.
    private var takePath: String
    private var logPath: String?
    private var ports: [String] { tap.ports }
    private var sampleRate: Int { tap.sampleRate }
    private var captureLatencyFrames = 0
    private let serverLost = Atomic<Bool>(false)
    private let stopped = Mutex(false)
    /// Held while `prepare()` runs: a `stop()` waits for it, so that no file
    /// it creates is left without its claim released and its take finished.
    private let preparation = NSLock()
    /// The `--on-silence`/`--on-signal` commands, by event name.
    private var hookCommands: [(event: String, hook: HookCommand)] = []
    private var catalogue: TakeCatalogue?
    private var retentionKeeper: RetentionKeeper?
    /// Signalled once the first `stop()` has finished (and passed on by each waiter).
    private let stopDone = DispatchSemaphore(value: 0)

    /// A recorder for `configuration`; nothing opens until it is prepared.
    public init(configuration: Configuration) {
        self.configuration = configuration
        takePath = configuration.outputPath
        logPath = RecordingLog.path(for: configuration.outputPath)
        tap = TapSession(clientName: configuration.clientName, serverName: configuration.serverName)
        (eventStream, events) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    deinit {
        tap.close()
    }

    /// Checks everything that can be checked (parameters, ports, format, path,
    /// space), opens the files and the log, and starts capturing: armed until
    /// the start command or trigger, recording at once otherwise.
    /// A `stop()` that comes while this runs (a SIGTERM in start-up) waits
    /// for it, then finishes what it set up; one that came before makes it
    /// set up nothing (`RecordingError.stoppedBeforeStart`).
    @discardableResult
    public func prepare() throws(RecordingError) -> RunningTake {
        preparation.lock()
        defer { preparation.unlock() }
        if stopped.withLock({ $0 }) { throw .stoppedBeforeStart }
        let config = configuration
        try Self.checkParameters(config)
        do {
            try tap.resolve(config.portPatterns, channels: config.channels)
        } catch {
            throw .capture(error)
        }
        let channels = ports.count
        try config.format.validate(channels: config.perChannelFiles ? 1 : channels, sampleRate: sampleRate)
        let naming = TakeNaming(pattern: config.outputPath, rotates: config.rotateSeconds != nil, channels: channels,
                                perChannel: config.perChannelFiles, zone: config.timeZone)
        // The log is named when the take is set up; a file named by time, by its first frame.
        let now = config.clock.read().utc
        let continuation = TakeContinuation(naming: naming, manifestPath: config.manifestPath,
                                            signingKey: config.manifestSigningKey, now: now)
        let (manifest, firstIndex) = (continuation.manifest, continuation.firstIndex)
        takePath = naming.basePath(index: firstIndex, utc: now)
        logPath = RecordingLog.path(for: takePath)
        let fifo = try Self.checkDestination(config, path: takePath, channels: channels, sampleRate: sampleRate)
        let namedByFirstFrame = naming.hasTimeFields && fifo == nil
        var first = try TakeFileSets.claimFirst(paths: namedByFirstFrame ? [] : naming.paths(index: firstIndex, utc: now),
                                                logPath: logPath, overwrite: config.overwrite, fifo: fifo)
        let log: RecordingLog
        do {
            if let manifest {
                try TakeFileSets.makeFolders(for: [manifest.path])
                try manifest.open()
            }
            try first.open(channels: channels, sampleRate: sampleRate, format: config.format)
            log = try RecordingLog(path: logPath)
        } catch {
            first.abandon()
            throw error
        }
        self.log = log
        if let manifest { openCatalogue(manifest, log: log, unlisted: continuation.unlisted) }
        let capture: RealtimeCapture
        do {
            capture = try tap.start(ringSeconds: config.bufferSeconds, wakeReaderEvery: Self.wakeEveryFrames(sampleRate: sampleRate))
            captureLatencyFrames = try session.inputLatencyRange.max
        } catch {
            first.abandon()
            throw .session(error)
        }
        let hooks = levelHooks(log: log), events = events
        let record: @Sendable (RecordingEvent) -> Void = { event in
            log.append(event)
            events.yield(event)
            hooks(event)
        }
        let ledger = TakeLedger(channels: channels, limitFrames: config.duration.map { Int64(($0 * Double(sampleRate)).rounded()) })
        let fileSets = TakeFileSets(
            settings: TakeFileSets.Settings(
                naming: naming, format: config.format,
                rotation: config.rotateSeconds.map {
                    RotationRule(seconds: $0, sampleRate: sampleRate, alignment: config.rotationAlignment)
                },
                zone: config.timeZone, overwrite: config.overwrite, catalogue: catalogue, retention: retentionKeeper,
                firstIndex: firstIndex),
            first: first, channels: channels, ledger: ledger, record: record)
        let settings = DiskWriter.Settings(
            prerollFrames: Int(config.prerollSeconds * Double(sampleRate)),
            triggerLevel: config.triggerDBFS.map { Float(pow(10, $0 / 20)) },
            waitsForStart: config.waitsForStartCommand,
            clock: config.clock, captureLatencyFrames: captureLatencyFrames,
            silenceThresholdDBFS: config.silenceThresholdDBFS, silenceHoldSeconds: config.silenceHoldSeconds,
            stopsOnDiskFull: config.stopsOnDiskFull, onWritten: config.onWritten)
        let session = session
        let writer = DiskWriter(capture: capture, fileSets: fileSets, ledger: ledger, sampleRate: sampleRate,
                                settings: settings, record: record, currentSampleRate: { Int(session.sampleRate) })
        writer.connectedFrom = tap.connectedFrom
        self.writer = writer
        watchSession()
        writer.start()
        retentionKeeper?.start()
        watchSources(writer)
        if config.triggerDBFS != nil || config.waitsForStartCommand {
            emit(.armed(prerollSeconds: config.prerollSeconds, triggerDBFS: config.triggerDBFS))
        }
        return RunningTake(self)
    }

    /// Lists the take's files in `manifest` (those a killed run left, and
    /// `unlisted`, as recovered) and keeps its retention.
    private func openCatalogue(_ manifest: TakeManifest, log: RecordingLog, unlisted: [(path: String, index: Int)]) {
        let config = configuration, events = events
        let catalogue = TakeCatalogue(manifest: manifest) { problem in
            let event = RecordingEvent.writeFailed(atFrame: -1, reason: problem)
            log.append(event)
            events.yield(event)
        }
        for path in catalogue.recoverOrphans() { emit(.recovered(path: path)) }
        for file in unlisted where catalogue.recoverUnlisted(file.path, index: file.index, zone: config.timeZone) {
            emit(.recovered(path: file.path))
        }
        self.catalogue = catalogue
        guard config.retention.isActive else { return }
        let folder = (takePath as NSString).deletingLastPathComponent
        retentionKeeper = RetentionKeeper(retention: config.retention, catalogue: catalogue,
                                          folder: Self.existingFolder(folder.isEmpty ? "." : folder),
                                          clock: config.clock) { event in
            log.append(event)
            events.yield(event)
        }
    }

    /// Says when recorded ports go away and come back: a gap of the take
    /// (or its end, with `stopsOnSourceLost`).
    private func watchSources(_ writer: DiskWriter) {
        let config = configuration
        tap.watchSources(
            isWatching: { [weak self] in
                guard let self, !self.serverLost.load(ordering: .relaxed) else { return false }
                let stats = writer.ledger.snapshot
                return stats.recording && !stats.finished
            },
            position: { frameTime in
                frameTime.map { writer.settledPosition(ofFrameTime: $0) } ?? writer.ledger.snapshot.framesWritten
            },
            onLost: { [weak self] absence in
                self?.emit(.sourceLost(ports: absence.ports, atFrame: absence.at))
                if config.stopsOnSourceLost {
                    writer.finish(reason: "source lost: " + absence.ports.joined(separator: ", "))
                }
            },
            onBack: { [weak self] absence, end, frameTime in
                let gap = writer.ledger.noteSourceGap(from: absence.at, to: end)
                self?.emit(.sourceGap(atFrame: gap.at, frames: gap.frames, ports: absence.ports, resumedFrameTime: frameTime))
            })
    }

    /// The start command (when waiting for one): the recording begins at the
    /// start of the cycle in progress (at most a period before this moment),
    /// less the pre-roll. Not at `jack_frame_time`, whose filter can be a
    /// tenth of a second either side of the cycles on a loaded machine
    /// (`PortTap.connectedFrom`): ahead, it would lose what followed the command.
    public func start() {
        guard let client = session.client else { return }
        writer?.requestStart(atFrame: client.cycleFrameTime)
    }

    /// Waits until the recording reached its duration, failed, was ended
    /// (`end(reason:)`) or stopped; false on timeout.
    @discardableResult
    public func waitUntilFinished(timeout: Double? = nil) -> Bool {
        guard let writer else { return true }
        return writer.finished.wait(timeout: timeout)
    }

    /// Suspends until the recording reached its duration, failed, was ended
    /// (`end(reason:)`) or stopped: at once, not at the next look.
    public func finished() async {
        await writer?.finished.reached()
    }

    /// Whether the recording reached its duration or stopped on a write error.
    public var isFinished: Bool { writer?.ledger.snapshot.finished ?? false }

    /// Ends the take now, for `reason`, as a reached duration does:
    /// `isFinished` becomes true, and the summary's `stopReason` says why.
    /// The owner then calls `stop()` (from any thread: a remote stop).
    public func end(reason: String) {
        writer?.finish(reason: reason)
    }

    /// Stops capturing, writes what the ring still holds, finalises the files
    /// and the log, which says `reason` (nil: the duration was reached, or
    /// writing failed, or the program stopped it). Idempotent.
    public func stop(reason: String? = nil) {
        let already = stopped.withLock { value -> Bool in
            defer { value = true }
            return value
        }
        // A second caller (Ctrl-C while the duration's end is being written)
        // waits for the first: the summary it reads next is the final one.
        guard !already else {
            stopDone.wait()
            stopDone.signal()
            return
        }
        defer { stopDone.signal() }
        preparation.lock()
        preparation.unlock()
        let why = reason ?? writer.flatMap { writer in
            let stats = writer.ledger.snapshot
            return stats.problem.map { "failed: \($0)" } ?? (stats.finished ? "duration reached" : nil)
        } ?? "stopped by the program"
        // The take ends here, not after jack_deactivate's disconnections.
        tap.stopListening()
        endHooks()
        writer?.stopAndWait(reason: why)
        retentionKeeper?.stop()
        catalogue?.waitUntilWritten()
        tap.close()
        events.finish()
    }

    /// The JACK ports recorded, channel order.
    public var recordedPorts: [String] { ports }

    /// The recording's state now; peaks are those since the previous call.
    public func progress() -> RecordingProgress {
        guard let writer, let capture else {
            return RecordingProgress(isRecording: false, framesWritten: 0, sampleRate: sampleRate, peakDBFS: [],
                                     ringFill: 0, overruns: 0, xruns: 0, gaps: 0, gapFrames: 0, path: nil,
                                     serverLost: false)
        }
        let peaks = writer.ledger.takePeaks().map { $0 > 0 ? 20 * log10(Double($0)) : -Double.infinity }
        let stats = writer.ledger.snapshot
        return RecordingProgress(isRecording: stats.recording && !stats.finished, framesWritten: stats.framesWritten,
                                 sampleRate: sampleRate, peakDBFS: peaks,
                                 ringFill: Double(capture.ring.availableToRead) / Double(capture.ring.capacity),
                                 overruns: stats.overruns, xruns: stats.xruns, gaps: stats.gaps,
                                 gapFrames: stats.gapFrames, path: stats.paths.last,
                                 serverLost: serverLost.load(ordering: .relaxed), rateErrorPPM: stats.rateErrorPPM)
    }

    /// What the recording did (complete after `stop()`).
    public var summary: RecordingSummary {
        let stats = writer?.ledger.snapshot
        let paths = stats?.paths ?? []
        return RecordingSummary(
            path: paths.first ?? takePath, paths: paths, logPath: logPath,
            framesWritten: stats?.framesWritten ?? 0,
            durationSeconds: sampleRate > 0 ? Double(stats?.framesWritten ?? 0) / Double(sampleRate) : 0,
            sampleRate: sampleRate, channels: ports.count, ports: ports,
            overruns: stats?.overruns ?? 0, overrunFrames: stats?.overrunFrames ?? 0, xruns: stats?.xruns ?? 0,
            gaps: stats?.gaps ?? 0, gapFrames: stats?.gapFrames ?? 0,
            interruptions: stats?.interruptions ?? 0, interruptionFrames: stats?.interruptionFrames ?? 0,
            firstFrameTime: stats?.firstFrameTime,
            prerollFrames: stats?.prerollFrames ?? 0, timeReference: stats?.timeReference,
            captureLatencyFrames: captureLatencyFrames, bufferSeconds: configuration.bufferSeconds,
            problem: stats?.problem, stopReason: writer?.endReason, unwrittenFrames: stats?.unwrittenFrames ?? 0,
            manifestPath: catalogue?.manifest.path)
    }

    /// Frames the ring holds when full.
    public var ringCapacityFrames: Int { capture?.capacityFrames ?? 0 }

    /// The disk thread is woken once about 20 ms of frames wait (every
    /// fourth cycle at 256 frames, 48 kHz): fewer wake-ups than one a
    /// cycle, with a 4 s ring far from full.
    public static func wakeEveryFrames(sampleRate: Int) -> Int { max(1, sampleRate / 50) }

    /// Turns of the disk thread's loop so far: moves while it drains, waits
    /// or writes, stands still while a write blocks (a watchdog's measure).
    public var diskBeats: UInt64 { writer?.beats.load(ordering: .relaxed) ?? 0 }

    // MARK: Session events

    /// Turns the session's events into the recording's: xruns placed in the
    /// file, server loss (the next frames belong to another epoch) and return.
    private func watchSession() {
        // The seeds' guideline for recording and metering apps: stop on an
        // interruption, and always try to reactivate when it ends, with or
        // without shouldResume (the tap does).
        tap.watchEvents({ [weak self] event in
            guard let self, let writer = self.writer else { return }
            switch event {
            case let .xrun(count, _, delay, firstFrameTime):
                guard let client = self.session.client else { return }
                let recording = writer.ledger.countXruns(count)
                // Where the first of them came, not where the report (up to 250 ms later) is read.
                let frameTime = firstFrameTime ?? client.cycleFrameTime
                if recording { self.emit(.xrun(atFrame: writer.ledger.position(ofFrameTime: frameTime), delayMicroseconds: delay)) }
            case .interruption(.began, _, _):
                let by = self.session.interruptingClient ?? "another session"
                writer.noteInterruption(by: by)
                self.emit(.interrupted(by: by, atFrame: writer.ledger.framesWritten))
            case let .mediaServicesWereLost(reason):
                self.capture?.serverEpoch.add(1, ordering: .relaxed)
                self.serverLost.store(true, ordering: .relaxed)
                self.emit(.serverLost(atFrame: writer.ledger.framesWritten, reason: reason))
            case let .mediaServicesWereReset(reset):
                self.serverLost.store(false, ordering: .relaxed)
                self.emit(.serverBack(sampleRate: Int(reset.sampleRate), downtimeSeconds: reset.downtime))
            default:
                break
            }
        }, refused: { [weak self] in self?.emit(.resumeRefused(reason: $0.message)) },
           resumed: { [weak self] in self?.emit(.resumed(attempts: $0)) })
    }

    /// The take has ended: commands still running get `hookGraceSeconds`, then are ended, each logged.
    private func endHooks() {
        for (event, hook) in hookCommands {
            for reason in hook.finish(within: configuration.hookGraceSeconds) {
                emit(.hookFailed(event: event, command: hook.command, reason: reason))
            }
        }
    }

    /// Runs `--on-silence` and `--on-signal` for their events, with the facts in the environment.
    private func levelHooks(log: RecordingLog) -> @Sendable (RecordingEvent) -> Void {
        let events = events
        func hook(_ command: String?, _ name: String) -> HookCommand? {
            command.map { command in
                HookCommand(command: command) { reason in
                    let failure = RecordingEvent.hookFailed(event: name, command: command, reason: reason)
                    log.append(failure)
                    events.yield(failure)
                }
            }
        }
        let onSilence = hook(configuration.onSilence, "silence"), onSignal = hook(configuration.onSignal, "signal")
        hookCommands = [("silence", onSilence), ("signal", onSignal)].compactMap { name, hook in hook.map { (name, $0) } }
        guard onSilence != nil || onSignal != nil else { return { _ in } }
        let ports = ports, rate = Double(sampleRate), file = takePath
        return { event in
            let facts: (hook: HookCommand?, name: String, channels: [Int], level: Double, at: Int64, silent: Int64)
            switch event {
            case let .silence(channels, level, at, silent): facts = (onSilence, "silence", channels, level, at, silent)
            case let .signal(channels, level, at, silent): facts = (onSignal, "signal", channels, level, at, silent)
            default: return
            }
            let (hook, name, channels, level, at, silent) = facts
            hook?.run(environment: [
                "JAS_EVENT": name, "JAS_CHANNELS": channels.map(String.init).joined(separator: ","),
                "JAS_PORTS": channels.map { ports[$0 - 1] }.joined(separator: ","),
                "JAS_LEVEL_DBFS": level.isFinite ? String(format: "%.1f", level) : "-inf",
                "JAS_POSITION_FRAMES": String(at), "JAS_POSITION_SECONDS": String(format: "%.3f", Double(at) / rate),
                "JAS_SILENT_SECONDS": String(format: "%.3f", Double(silent) / rate),
                "JAS_TIME": ISO8601DateFormatter().string(from: Date()), "JAS_FILE": file])
        }
    }

    /// An event found beside the take (its meter's compliance alarms): in its log and its event stream.
    public func note(_ event: RecordingEvent) { emit(event) }

    private func emit(_ event: RecordingEvent) {
        log?.append(event)
        events.yield(event)
    }
}
