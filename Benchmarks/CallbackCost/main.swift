// `make bench`: the measurement session's process callback cost next to a C
// passthrough client doing the same work on the same server, in the same run.
//
// usage: callback-bench --c-reference PATH [--period N] [--cycles N] [--rounds N]
import AudioSession
import Foundation
import JackKit
import LoopbackHarness

struct Options {
    var cReference = "Benchmarks/bin/c-passthrough"
    var period = 128
    var cycles = 3000
    var rounds = 3
    var channelCounts = [2, 32]

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            let value = rest.popFirst() ?? ""
            switch flag {
            case "--c-reference": cReference = value
            case "--period": period = Int(value) ?? period
            case "--cycles": cycles = Int(value) ?? cycles
            case "--rounds": rounds = Int(value) ?? rounds
            default: fatalError("callback-bench: unknown option \(flag)")
            }
        }
    }
}

/// Median and 99th percentile of nanosecond durations.
struct Summary {
    let median: Double
    let p99: Double
    init(_ samples: [UInt64]) {
        let sorted = samples.sorted()
        median = Double(sorted[sorted.count / 2])
        p99 = Double(sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
    }
}

func runCReference(_ path: String, server: String, channels: Int, cycles: Int) throws -> [UInt64] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = [server, String(channels), String(cycles)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { fatalError("C reference failed (\(process.terminationStatus))") }
    return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { UInt64($0) }
}

func runSwiftSession(server: String, channels: Int, cycles: Int) throws -> [UInt64] {
    let warmUp = 200
    let session = AudioSession(clientName: "swift-session", serverName: server)
    defer { session.close() }
    try session.setCategory(.playAndRecord, mode: .measurement)
    try session.setPreferredInputNumberOfChannels(channels)
    try session.setPreferredOutputNumberOfChannels(channels)
    session.setPreferredInputPortNames((1...channels).map { "loopback:capture_\($0)" })
    session.setPreferredOutputPortNames((1...channels).map { "loopback:playback_\($0)" })
    session.setRenderBlock { cycle in
        for (input, output) in zip(cycle.inputs, cycle.outputs) {
            output.update(from: input, count: cycle.frameCount)
        }
    }
    let recorder = CycleCostRecorder(capacity: cycles + warmUp)
    session.setCycleCostRecorder(recorder)
    try session.setActive(true)
    while !recorder.isFull { usleep(10_000) }
    try session.setActive(false)
    return Array(recorder.samples.dropFirst(warmUp))
}

LibraryMessages.silence()
let options = Options(Array(CommandLine.arguments.dropFirst()))
let server = try LoopbackServer(name: "jas-bench-\(getpid())", loopbackChannels: options.channelCounts.max()!,
                                period: options.period)
defer { server.stop() }
print("server \(server.name): 48000 Hz, period \(options.period) frames, \(options.rounds) alternating rounds of "
      + "\(options.cycles) cycles per client")
print("| channels | C median (ns) | C p99 (ns) | Swift median (ns) | Swift p99 (ns) | median ratio Swift/C | p99 ratio |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for channels in options.channelCounts {
    var cSamples: [UInt64] = []
    var swiftSamples: [UInt64] = []
    for _ in 0..<options.rounds {
        cSamples += try runCReference(options.cReference, server: server.name, channels: channels, cycles: options.cycles)
        swiftSamples += try runSwiftSession(server: server.name, channels: channels, cycles: options.cycles)
    }
    let c = Summary(cSamples)
    let swift = Summary(swiftSamples)
    print(String(format: "| %d | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |", channels, c.median, c.p99, swift.median,
                 swift.p99, swift.median / c.median, swift.p99 / c.p99))
}
