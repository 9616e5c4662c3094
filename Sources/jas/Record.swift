import ArgumentParser
import EventSchema
import Foundation
import JackRuntime
import Metering
import Recording
import RemoteWatch
import Synchronization

/// `jas record`: multichannel recording through the Recording module.
struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record JACK ports to WAV, RF64, W64 or FLAC, losing nothing.",
        discussion: """
            Every check (ports, format, path, free space) is made before recording starts. Missing frames \
            (a full ring, a server restart) are written as silence of the right length and logged in \
            PATH's .log file (JSON Lines); headers are rewritten every half second, so a crash leaves a \
            file that opens. With --preroll the recording starts that much before its start: the trigger \
            (--trigger), or else SIGUSR1 or Enter. Ctrl-C or SIGTERM stops and finalises the file.
            """
    )

    @OptionGroup var server: ServerOption

    @Option(name: .customLong("ports"), help: "Ports to record, shell wildcards allowed, e.g. 'system:capture_*' (repeatable; default: the first physical capture ports).")
    var ports: [String] = []

    @Option(help: "How many channels (default: every matched port; 2 without --ports).")
    var channels: Int?

    @Option(help: "The file to write.")
    var output: String

    @Option(help: "The file format (default: from the file name's extension, else wav).")
    var format: RecordingFormat.Container?

    @Option(help: "Sample format: bits per sample, or float (default: float; 24 for flac).")
    var bits: RecordingFormat.SampleFormat?

    @Flag(help: "One file per channel (PATH's stem gets _1, _2, ...).")
    var perChannel = false

    @Option(name: .customLong("for"), help: "Stop after this many seconds of recording (default: until Ctrl-C).")
    var seconds: Double?

    @Option(help: "Start a new file every this long, e.g. 1h or 10min, on the clock's boundaries (10s: at :00, :10, ...; 1h: on the hour) when the period divides a day: no frame is lost or repeated between files (names: a strftime pattern in --output, e.g. 'log-%Y%m%d-%H%M%S%z.wav', its first frame's time; else NAME-001, NAME-002, ...).")
    var rotate: String?

    @Option(help: "Where --rotate counts from: clock (its boundaries, the default) or start (the take's first frame).")
    var rotateFrom: RotationAlignment = .clock

    @Flag(help: "Names, bext times and the clock's boundaries in UTC (default: local time, $TZ).")
    var utc = false

    @Option(help: "Delete this logger's own files once older than this, e.g. 90d or 12h (only files its manifest lists; each deletion is logged).")
    var keep: String?

    @Option(help: "Delete this logger's oldest files to keep this much free on their disk, e.g. 10G or 5%.")
    var minFree: String?

    @Flag(help: "End the take when the disk is full (default: close the file, wait for room, go on in a new file, and log what could not be written).")
    var stopOnDiskFull = false

    @Option(help: "The take's manifest, JSON Lines: each file, its time, frames, gaps and SHA-256 (default: beside the files, named after --output, e.g. log.manifest.jsonl).")
    var manifest: String?

    @OptionGroup(title: "Loudness compliance (of what the take writes)")
    var compliance: LoudnessOptions

    @Option(help: "Sign each line of the manifest with this private key (from 'jas keygen'); 'jas verify --key KEY.pub' then proves no line was written or changed without it.")
    var signKey: String?

    @Flag(help: "End the take when a recorded port goes away (its client ends, its device is unplugged), instead of recording silence until it comes back.")
    var stopOnSourceLost = false

    @Option(help: "Seconds of audio the ring between the audio thread and the disk holds.")
    var buffer: Double = 4

    @Option(help: "Seconds from before the start that the file begins with.")
    var preroll: Double = 0

    @Option(parsing: .unconditional, help: "Start when a sample on any channel reaches this level, e.g. -40 or -40dBFS.")
    var trigger: String?

    @Option(help: "The JACK client name.")
    var name = "jas-record"

    @Flag(help: "Replace the files the take writes (PATH, its .log, per-channel files) if they exist.")
    var overwrite = false

    @Flag(help: "Print JSON Lines: events, a progress object each second, a final summary.")
    var json = false

    @Option(parsing: .unconditional, help: "Dead air: a channel whose sample peak stays below this level, e.g. -60 or -60dBFS, ...")
    var silenceThreshold: String = "-60"

    @Option(help: "... for this long is a 'silence' event, e.g. 10s or 2min; its return a 'signal' event.")
    var silenceHold: String = "10s"

    @Option(help: "A shell command to run at a 'silence' event (environment: JAS_EVENT, JAS_CHANNELS, JAS_PORTS, JAS_LEVEL_DBFS, JAS_POSITION_SECONDS, JAS_SILENT_SECONDS, JAS_TIME, JAS_FILE).")
    var onSilence: String?

    @Option(help: "A shell command to run at a 'signal' event (the same environment).")
    var onSignal: String?

    @OptionGroup(title: "Watching from a browser or Prometheus (the page also meters the take: levels, loudness)")
    var http: HTTPOptions

    func validate() throws {
        _ = try recordingFormat()
        _ = try triggerLevel()
        _ = try Self.level(silenceThreshold, "--silence-threshold", example: "-60")
        _ = try OptionCheck.duration(silenceHold, "--silence-hold", in: RecordingSetting.silenceHold.secondsRange!, example: "10s or 2min")
        _ = try rotateSeconds()
        _ = try retention()
        _ = try compliance.loudnessTarget()
        _ = try compliance.holdSeconds()
        try OptionCheck.seconds(seconds, "--for")
        try OptionCheck.number(buffer, "--buffer", in: RecordingSetting.buffer.secondsRange!, unit: "seconds")
        try OptionCheck.seconds(preroll, "--preroll", allowZero: true, maximum: RecordingSetting.preroll.secondsRange!.upperBound)
        if let channels, !(1...1024).contains(channels) {
            throw ValidationError("--channels must be 1 to 1024, not \(channels)")
        }
    }

    func recordingFormat() throws -> RecordingFormat {
        let ext = (output as NSString).pathExtension.lowercased()
        let container = format ?? RecordingFormat.Container(rawValue: ext) ?? .wav
        let sampleFormat = bits ?? (container == .flac ? .int24 : .float32)
        return RecordingFormat(container: container, sampleFormat: sampleFormat)
    }

    func rotateSeconds() throws -> Double? {
        try rotate.map { try OptionCheck.duration($0, "--rotate", in: RecordingSetting.rotation.secondsRange!, example: "1h or 10min") }
    }

    func retention() throws -> Retention {
        Retention(keepSeconds: try keep.map { try OptionCheck.duration($0, "--keep", in: 60...(100 * OptionCheck.longestRun),
                                                                       example: "90d or 12h") },
                  minimumFree: try minFree.map { try OptionCheck.space($0, "--min-free") })
    }

    func triggerLevel() throws -> Double? {
        try trigger.map { try Self.level($0, "--trigger", example: "-40") }
    }

    /// A level in dBFS written as `-40`, `-40dB` or `-40dBFS`, below 0.
    static func level(_ text: String, _ option: String, example: String) throws -> Double {
        var number = text.lowercased()
        for suffix in ["dbfs", "db"] where number.hasSuffix(suffix) { number.removeLast(suffix.count) }
        guard let level = Double(number.trimmingCharacters(in: .whitespaces)), level.isFinite, level < 0, level > -200 else {
            throw ValidationError("\(option) must be a level below 0 dBFS, e.g. \(example) or \(example)dBFS, not '\(text)'")
        }
        return level
    }

    /// The recorder's configuration, as the options ask.
    func recorderConfiguration() throws -> Recorder.Configuration {
        var configuration = Recorder.Configuration(outputPath: output)
        configuration.serverName = server.name
        configuration.portPatterns = ports
        configuration.channels = channels
        configuration.format = try recordingFormat()
        configuration.perChannelFiles = perChannel
        configuration.duration = seconds
        configuration.rotateSeconds = try rotateSeconds()
        configuration.rotationAlignment = rotateFrom
        configuration.timeZone = utc ? .utc : .local
        configuration.retention = try retention()
        configuration.stopsOnDiskFull = stopOnDiskFull
        configuration.manifestPath = manifest
        if let signKey {
            do {
                configuration.manifestSigningKey = try ManifestSigningKey(contentsOf: signKey)
            } catch {
                Output.diagnostic("jas record: --sign-key: \(Output.reason(error))")
                throw ExitCode(2)
            }
        }
        configuration.bufferSeconds = buffer
        configuration.prerollSeconds = preroll
        configuration.triggerDBFS = try triggerLevel()
        configuration.waitsForStartCommand = preroll > 0 && trigger == nil
        configuration.clientName = name
        configuration.overwrite = overwrite
        configuration.silenceThresholdDBFS = try Self.level(silenceThreshold, "--silence-threshold", example: "-60")
        configuration.silenceHoldSeconds = try OptionCheck.duration(silenceHold, "--silence-hold", in: RecordingSetting.silenceHold.secondsRange!,
                                                                    example: "10s or 2min")
        configuration.onSilence = onSilence
        configuration.onSignal = onSignal
        configuration.stopsOnSourceLost = stopOnSourceLost
        return configuration
    }

    func run() async throws {
        var configuration = try recorderConfiguration()
        let takeMeter = TakeMeter()
        let loudnessAlarm = try compliance.alarm { Output.diagnostic("jas record: \($0)") }
        if http.address != nil || loudnessAlarm != nil { configuration.onWritten = { takeMeter.add($0, frames: $1) } }
        // Nothing a reader of stdout does stops a take.
        Output.whenReaderGoes = .keepRecording
        let recorder = Recorder(configuration: configuration)
        var controls = WatchServer.Controls()
        controls.stop = { recorder.end(reason: "stopped over HTTP (POST /api/stop)") }
        controls.resetLoudness = { takeMeter.meter?.resetProgramme() }
        controls.pauseLoudness = { takeMeter.meter?.setProgrammePaused(true) }
        controls.resumeLoudness = { takeMeter.meter?.setProgrammePaused(false) }
        let board = WatchBoard(tool: .record, server: recorder.session.serverName)
        let watch = try await http.start(board, controls: controls, command: "record", json: json)
        let display = RecordDisplay(json: json, configuration: configuration, watch: watch == nil ? nil : board)
        // Before anything starts, so a Ctrl-C during start-up still finalises.
        Signals.onInterrupt(exitStatus: 0) {
            recorder.stop(reason: Signals.endingReason)
            display.finish(recorder.summary)
        }
        // Installed before anything starts too: SIGUSR1 ends a process by
        // default, and a start command sent to a take that needs none must
        // not stop it.
        let waitsForStart = configuration.waitsForStartCommand
        Signals.onUser1 {
            if waitsForStart {
                recorder.start()
            } else {
                Output.diagnostic("jas record: SIGUSR1 ignored: this take started at once (a start command is for "
                                  + "--preroll without --trigger)")
            }
        }
        WedgeWatch.start(command: "record") {
            recorder.stop(reason: "libjack wedged in this process: " + (ClientLifecycle.shared.wedgedReason ?? "no reason given"))
            display.finish(recorder.summary)
        }
        WedgeWatch.awaitServerAfterRestart(server, command: "record")
        let take: RunningTake
        do {
            take = try recorder.prepare()
            if let reason = ProcessRestart.previousReason { recorder.note(.restarted(reason: reason)) }
        } catch {
            // A signal that stopped the take while it was set up: its ending decides the exit.
            if Signals.isEnding { Signals.waitForExit() }
            Output.diagnostic("jas record: \(Output.reason(error))")
            throw ExitCode(2)
        }
        // Stopped while it was set up (the stop waited for it): the ending under way exits.
        if Signals.isEnding { Signals.waitForExit() }
        display.announce(take)
        if let loudnessAlarm { board.keepLoudness(loudnessAlarm.target) }
        if watch != nil || loudnessAlarm != nil {
            board.describe(["path": take.path], ports: take.ports)
            takeMeter.begin(channels: take.channels, sampleRate: take.sampleRate, sources: take.ports) { reading in
                display.reading(reading)
                loudnessAlarm?.observe(reading) { change, target in recorder.note(.loudnessAlarm(change, target: target)) }
            }
        }
        if configuration.waitsForStartCommand {
            if isatty(STDIN_FILENO) != 0 {
                Thread.detachNewThread {
                    if readLine() != nil { recorder.start() }
                }
            }
        }
        let events = take.events
        Task.detached {
            for await event in events { display.show(event) }
        }
        let service = RecordServiceReport(notifier: ServiceNotifier())
        let armed = configuration.triggerDBFS != nil || configuration.waitsForStartCommand
        // The status line and the service's watchdog, every quarter second, until the take ends.
        let status = Task {
            var tick = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                tick += 1
                let progress = take.progress()
                display.progress(progress, tick: tick)
                service?.update(progress, armed: armed, diskBeats: take.diskBeats)
            }
        }
        await take.finished()
        status.cancel()
        await status.value
        service?.stopping()
        WedgeWatch.claimEnding()
        recorder.stop()
        loudnessAlarm?.finish { Output.diagnostic("jas record: --on-loudness-alarm: \($0)") }
        let summary = recorder.summary
        display.finish(summary)
        await watch?.stop()
        WedgeWatch.leaveIfWedged(command: "record")
        if summary.problem != nil { throw ExitCode.failure }
    }
}

extension RotationAlignment: ExpressibleByArgument {}
