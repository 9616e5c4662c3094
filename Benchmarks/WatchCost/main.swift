// `make bench`: what serving `--http` costs a live meter.
//
// The same 8-channel live meter (LiveMeter, 64-frame periods), first alone,
// then with a RemoteWatch server fed its readings while a WebSocket viewer
// reads every reading (10 a second), /metrics is scraped every second and
// the page is open in headless Chromium (the probes of Tests/RemoteWatchServerTests).
// Compared: the process callback's duration (the real-time cost) and this
// process's CPU time per second (user + system: readings, serving, all).
//
// usage: watch-bench [--seconds S] [--browser yes|no]
import JackAudioSession
import BenchmarkSupport
import Foundation
import JackKit
import JackRuntime
import LoopbackHarness
import Metering
import RemoteWatch

struct Options {
    var seconds = 30
    var browser = true

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            let value = rest.popFirst() ?? ""
            switch flag {
            case "--seconds": seconds = Int(value) ?? seconds
            case "--browser": browser = value != "no"
            default: refuseOption(flag, tool: "watch-bench", usage: "usage: watch-bench [--seconds S] [--browser yes|no]")
            }
        }
    }
}

/// This process's CPU time so far, seconds (user + system).
func cpuTime() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

struct Phase {
    var callback: Percentiles
    var cpuPerSecond: Double
    var readings: Int
}

let probe = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Tests/RemoteWatchServerTests/Probes/watch_probe.py").path

func launch(_ arguments: [String]) -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", probe] + arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try? process.run()
    return process
}

func measure(server: LoopbackServer, seconds: Int, serve: Bool, browser: Bool) async throws -> Phase {
    var configuration = LiveMeter.Configuration()
    configuration.serverName = server.name
    configuration.portPatterns = ["loopback:capture_*"]
    configuration.clientName = serve ? "bench-watched" : "bench-alone"
    let meter = LiveMeter(configuration: configuration)
    let cycles = seconds * 48000 / 64
    let costs = CycleCostRecorder(capacity: cycles + 1000)
    meter.session.setCycleCostRecorder(costs)
    let board = WatchBoard(tool: .meter, server: server.name)
    var watch: WatchServer?
    if serve {
        watch = try WatchServer(board: board, address: WatchAddress(port: 0), token: nil, controls: .init())
        try await watch?.start()
    }
    let readings = Counter()
    try meter.start { reading in
        readings.add()
        guard serve else { return }
        board.publish(reading)
    }
    var clients: [Process] = []
    if let watch {
        let url = watch.url
        clients.append(launch(["ws", url.replacingOccurrences(of: "http://", with: "ws://") + "ws", String(seconds + 5)]))
        clients.append(launch(["scrape", url + "metrics", String(seconds + 5)]))
        if browser { clients.append(launch(["browser", url, NSTemporaryDirectory() + "watch-bench.png", String(seconds + 5)])) }
        try await Task.sleep(nanoseconds: 3_000_000_000)
    }
    let skip = costs.count
    let cpuBefore = cpuTime(), wallBefore = Date()
    while !costs.isFull { try await Task.sleep(nanoseconds: 20_000_000) }
    let cpu = cpuTime() - cpuBefore, wall = Date().timeIntervalSince(wallBefore)
    _ = meter.stop()
    await watch?.stop()
    for client in clients where client.isRunning { client.terminate() }
    return Phase(callback: Percentiles(Array(costs.samples.dropFirst(skip))), cpuPerSecond: cpu / wall,
                 readings: readings.value)
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

LibraryMessages.silence()
let options = Options(Array(CommandLine.arguments.dropFirst()))
let server = try LoopbackServer(name: "jas-watch-bench-\(getpid())", loopbackChannels: 8, period: 64)
defer { server.stop() }
let alone = try await measure(server: server, seconds: options.seconds, serve: false, browser: false)
let watched = try await measure(server: server, seconds: options.seconds, serve: true, browser: options.browser)
print("Live meter, 8 channels, 64-frame periods at 48 kHz, \(options.seconds) s each; served: a WebSocket viewer, "
      + "/metrics every second" + (options.browser ? ", the page in headless Chromium" : "") + ":")
print(Percentiles.comparisonTable(title: "process callback", reference: ("without --http", alone.callback),
                                  swift: ("with --http, watched", watched.callback), ratio: "ratio with/without"))
print("")
print("| | CPU s per s (this process) | readings |")
print("|---|---:|---:|")
print(String(format: "| without --http | %.3f | %d |", alone.cpuPerSecond, alone.readings))
print(String(format: "| with --http, watched | %.3f | %d |", watched.cpuPerSecond, watched.readings))
print(String(format: "ratio of CPU: %.2f", watched.cpuPerSecond / max(alone.cpuPerSecond, 1e-9)))
