import ArgumentParser
import JackAudioSession
import Foundation
import Metering
import Recording
import RemoteWatch
import Synchronization

/// `jas meter`: broadcast meters on JACK ports or a file, for people and programs.
struct Meter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Meter JACK ports or a file: R128 loudness, true peak, sample peak, RMS, PPM, VU, K-meter.",
        discussion: """
            Per channel: sample peak (dBFS), true peak (dBTP, 4x oversampled), RMS (dBFS, AES17), IEC 60268-10 \
            PPM type I and IIb, IEC 60268-17 VU, K-meter. Programme: EBU R128 momentary, short-term, integrated \
            loudness (LUFS) and loudness range (LU). A live display by default; --json prints one object per \
            interval and a summary. Ctrl-C (or --for, or the end of --file) ends with the summary.
            """
    )

    @OptionGroup var server: ServerOption

    @Option(name: .customLong("ports"), help: "Ports to meter, shell wildcards allowed (repeatable; default: the first two physical capture ports).")
    var ports: [String] = []

    @Option(help: "Channel layout (5.1: L R C LFE Ls Rs; default: by channel count).")
    var layout: ChannelLayout?

    @Flag(help: "Print one JSON object per interval and a final summary.")
    var json = false

    @Option(help: "Time between readings, e.g. 100ms, 0.5s or 1 (seconds).")
    var interval: String = "100ms"

    @Option(name: .customLong("for"), help: "Stop after this many seconds (live metering).")
    var seconds: Double?

    @Option(help: "Meter this file instead of ports (offline, through the same meters).")
    var file: String?

    @Option(parsing: .unconditional, help: "The sine level that reads 0 VU, dBFS, e.g. -18.")
    var vuReference: Double = -18

    @Option(help: "The K-meter scale: 12, 14 or 20.")
    var kScale: Int = 14

    @Option(help: "Append a loudness log to this file: one JSON line per --log-interval (live metering).")
    var log: String?

    @Option(help: "Audio per line of the --log, e.g. 10s, 1min or 1h.")
    var logInterval: String = "1min"

    @Option(parsing: .unconditional, help: "Dead air: a 'silence' event when every reading's sample peak of a channel stays below this level, e.g. -60 or -60dBFS (default -60 when --silence-hold or --http is given; else no alarm) ...")
    var silenceThreshold: String?

    @Option(help: "... for this long, e.g. 10s or 2min (default 10s); a 'signal' event when it comes back.")
    var silenceHold: String?

    @OptionGroup(title: "Loudness compliance")
    var compliance: LoudnessOptions

    @OptionGroup(title: "Watching from a browser or Prometheus")
    var http: HTTPOptions

    func validate() throws {
        _ = try intervalSeconds()
        guard [12, 14, 20].contains(kScale) else { throw ValidationError("--k-scale must be 12, 14 or 20") }
        try OptionCheck.seconds(seconds, "--for")
        try OptionCheck.number(vuReference, "--vu-reference", in: -60...0, unit: "dBFS")
        _ = try logIntervalSeconds()
        _ = try silenceSettings()
        _ = try compliance.loudnessTarget()
        _ = try compliance.holdSeconds()
        if file != nil && (!ports.isEmpty || server.name != nil || log != nil || http.address != nil) {
            throw ValidationError("--file meters a file; --ports, --server, --log and --http are for live metering")
        }
    }

    /// The dead-air alarm's level (dBFS) and hold (seconds); nil when none was asked for.
    func silenceSettings() throws -> (threshold: Double, hold: Double)? {
        guard silenceThreshold != nil || silenceHold != nil || http.address != nil else { return nil }
        let threshold = try Record.level(silenceThreshold ?? "-60", "--silence-threshold", example: "-60")
        let hold = try OptionCheck.duration(silenceHold ?? "10s", "--silence-hold", in: RecordingSetting.silenceHold.secondsRange!,
                                              example: "10s or 2min")
        return (threshold, hold)
    }

    func intervalSeconds() throws -> Double {
        try OptionCheck.duration(interval, "--interval", in: 0.01...60, example: "100ms or 1s")
    }

    func logIntervalSeconds() throws -> Double {
        let seconds = try OptionCheck.duration(logInterval, "--log-interval", in: 0.1...86_400, example: "10s, 1min or 1h")
        guard ClockedLoudness.dividesADay(seconds) else {
            throw ValidationError("--log-interval must divide a day, so that its lines fall on the clock's boundaries "
                                  + "(e.g. 1s, 10s, 1min, 15min, 1h), not '\(logInterval)'")
        }
        guard seconds >= (try intervalSeconds()) - 1e-9 else {
            throw ValidationError("--log-interval (\(logInterval)) must be at least --interval (\(interval)): each line gathers readings")
        }
        return seconds
    }

    func run() async throws {
        let display = MeterDisplay(json: json)
        let loudnessAlarm = try compliance.alarm { display.warn($0) }
        let checkCompliance: @Sendable (MeterReading) -> Void = { reading in
            loudnessAlarm?.observe(reading) { change, target in display.loudnessAlarm(change, target: target) }
        }
        if let file {
            do {
                let summary = try FileMeter.meter(path: file, layout: layout, interval: try intervalSeconds(),
                                                  vuReferenceDBFS: vuReference, kScale: kScale,
                                                  onReading: { display.show($0); checkCompliance($0) },
                                                  onWarning: { display.warn($0) })
                display.finish(summary)
            } catch {
                Output.diagnostic("jas meter: \(Output.reason(error))")
                throw ExitCode(2)
            }
            loudnessAlarm?.finish { display.warn("--on-loudness-alarm: \($0)") }
            return
        }
        WedgeWatch.awaitServerAfterRestart(server, command: "meter")
        var configuration = LiveMeter.Configuration()
        configuration.serverName = server.name
        configuration.portPatterns = ports
        configuration.layout = layout
        configuration.interval = try intervalSeconds()
        configuration.vuReferenceDBFS = vuReference
        configuration.kScale = kScale
        let meter = LiveMeter(configuration: configuration)
        var opened: LoudnessLog?
        do {
            // Without --log, the clock's intervals, hours and days still go to the live page.
            if log != nil || http.address != nil {
                opened = try LoudnessLog(path: log, intervalSeconds: try logIntervalSeconds(), readingSeconds: try intervalSeconds(),
                                         onLine: { display.watch?.publish($0) }, onProblem: { display.warn($0) })
            }
        } catch {
            Output.diagnostic("jas meter: \(Output.reason(error))")
            throw ExitCode(2)
        }
        let loudnessLog = opened
        display.log = loudnessLog
        let control = ProgrammeControl(meter: meter, display: display, log: loudnessLog)
        var controls = WatchServer.Controls()
        controls.resetLoudness = { control.perform("reset") }
        controls.pauseLoudness = { control.perform("pause") }
        controls.resumeLoudness = { control.perform("resume") }
        let board = WatchBoard(tool: .meter, server: meter.session.serverName)
        let watch = try await http.start(board, controls: controls, command: "meter", json: json)
        if watch != nil { display.watch = board }
        if let loudnessAlarm { board.keepLoudness(loudnessAlarm.target) }
        let finish: @Sendable () -> Void = {
            let summary = meter.stop()
            loudnessLog?.finish()
            if let summary { display.finish(summary) }
            loudnessAlarm?.finish { display.warn("--on-loudness-alarm: \($0)") }
        }
        Signals.onInterrupt(exitStatus: 0, finish)
        WedgeWatch.start(command: "meter", finalise: finish)
        Signals.onUser1 { control.perform("reset") }
        let silence = try silenceSettings().map { settings in
            DeadAirWatch(thresholdDBFS: settings.threshold, holdSeconds: settings.hold, interval: try intervalSeconds())
        }
        do {
            try meter.start(onReading: { reading in
                control.lastSeconds.withLock { $0 = reading.seconds }
                display.show(reading)
                loudnessLog?.add(reading)
                silence?.observe(reading) { display.silence($0, tick: DeadAirWatch.tick) }
                checkCompliance(reading)
            }, onEvent: { event in
                switch event {
                case .mediaServicesWereLost, .mediaServicesWereReset, .interruption, .serverLimitation: display.event(event)
                case .xrun: display.eventForWatch(event)
                default: break
                }
            }, onSource: { display.source($0) })
        } catch {
            Output.diagnostic("jas meter: \(Output.reason(error))")
            throw ExitCode(2)
        }
        display.announce(ports: meter.ports, server: meter.session.serverName)
        board.describe([:], ports: meter.ports)
        control.readCommands()
        if let seconds {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            WedgeWatch.claimEnding()
            finish()
            await watch?.stop()
            WedgeWatch.leaveIfWedged(command: "meter")
            return
        }
        while true { try? await Task.sleep(nanoseconds: 1_000_000_000) }
    }
}
