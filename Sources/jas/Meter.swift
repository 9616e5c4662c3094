import ArgumentParser
import AudioSession
import Foundation
import Metering

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

    @Option(help: "The JACK server (default: $JACK_DEFAULT_SERVER or 'default').")
    var server: String?

    @Option(name: .customLong("ports"), help: "Ports to meter, shell wildcards allowed (repeatable; default: the first two physical capture ports).")
    var ports: [String] = []

    @Option(help: "mono, stereo or 5.1 (L R C LFE Ls Rs); default by channel count.")
    var layout: String?

    @Flag(help: "Print one JSON object per interval and a final summary.")
    var json = false

    @Option(help: "Time between readings, e.g. 100ms, 0.5s or 1 (seconds).")
    var interval: String = "100ms"

    @Option(name: .customLong("for"), help: "Stop after this many seconds (live metering).")
    var seconds: Double?

    @Option(help: "Meter this file instead of ports (offline, through the same meters).")
    var file: String?

    @Option(help: "The sine level that reads 0 VU, dBFS.")
    var vuReference: Double = -18

    @Option(help: "The K-meter scale: 12, 14 or 20.")
    var kScale: Int = 14

    func validate() throws {
        _ = try intervalSeconds()
        _ = try channelLayout()
        guard [12, 14, 20].contains(kScale) else { throw ValidationError("--k-scale must be 12, 14 or 20") }
        try OptionCheck.seconds(seconds, "--for")
        try OptionCheck.number(vuReference, "--vu-reference", in: -60...0, unit: "dBFS")
        if file != nil && (!ports.isEmpty || server != nil) {
            throw ValidationError("--file meters a file; --ports and --server are for live metering")
        }
    }

    func intervalSeconds() throws -> Double {
        let text = interval.lowercased()
        let value = text.hasSuffix("ms") ? Double(text.dropLast(2)).map { $0 / 1000 }
            : Double(text.hasSuffix("s") ? String(text.dropLast()) : text)
        guard let value, value >= 0.01, value <= 60 else {
            throw ValidationError("--interval must be a duration between 10ms and 60s, e.g. 100ms or 1s, not '\(interval)'")
        }
        return value
    }

    func channelLayout() throws -> ChannelLayout? {
        guard let layout else { return nil }
        guard let value = ChannelLayout(rawValue: layout) else {
            throw ValidationError("--layout must be mono, stereo or 5.1, not '\(layout)'")
        }
        return value
    }

    func run() async throws {
        let display = MeterDisplay(json: json)
        let layout = try channelLayout()
        if let file {
            do {
                let summary = try FileMeter.meter(path: file, layout: layout, interval: try intervalSeconds(),
                                                  vuReferenceDBFS: vuReference, kScale: kScale,
                                                  onReading: { display.show($0) }, onWarning: { display.warn($0) })
                display.finish(summary)
            } catch {
                Output.diagnostic("jas meter: \(Output.reason(error))")
                throw ExitCode(2)
            }
            return
        }
        var configuration = LiveMeter.Configuration()
        configuration.serverName = server
        configuration.portPatterns = ports
        configuration.layout = layout
        configuration.interval = try intervalSeconds()
        configuration.vuReferenceDBFS = vuReference
        configuration.kScale = kScale
        let meter = LiveMeter(configuration: configuration)
        Signals.onInterrupt(exitStatus: 0) {
            if let summary = meter.stop() { display.finish(summary) }
        }
        WedgeWatch.start(command: "meter") {
            if let summary = meter.stop() { display.finish(summary) }
        }
        do {
            try meter.start(onReading: { display.show($0) }, onEvent: { event in
                switch event {
                case .mediaServicesWereLost, .mediaServicesWereReset, .interruption: display.event(event)
                default: break
                }
            })
        } catch {
            Output.diagnostic("jas meter: \(Output.reason(error))")
            throw ExitCode(2)
        }
        display.announce(ports: meter.ports, server: meter.session.serverName)
        if let seconds {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            WedgeWatch.claimEnding()
            if let summary = meter.stop() { display.finish(summary) }
            WedgeWatch.leaveIfWedged(command: "meter")
            return
        }
        while true { try? await Task.sleep(nanoseconds: 1_000_000_000) }
    }
}
