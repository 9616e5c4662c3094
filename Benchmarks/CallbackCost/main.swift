// `make bench`: the measurement session's process callback cost next to a C
// passthrough client doing the same work on the same server, in the same run.
//
// The clients run at the same time, in the same JACK cycles, each timing its
// own callback: the C reference as its own process (c-passthrough), the same
// C code inside this process, and the Swift measurement session. Running them
// together gives them the same cache and scheduling weather, which on a small
// shared machine varies more from run to run than the clients differ.
//
// usage: callback-bench [--c-reference PATH] [--period N] [--cycles N] [--rounds N] [--channels 2,32]
import AudioSession
import BenchmarkSupport
import CReference
import Foundation
import JackKit
import LoopbackHarness
import Synchronization

struct Options {
    var cReference = "Benchmarks/bin/c-passthrough"
    var period = 128
    var cycles = 4000
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
            case "--channels": channelCounts = value.split(separator: ",").compactMap { Int($0) }
            default: fatalError("callback-bench: unknown option \(flag)")
            }
        }
    }
}

/// Starts the standalone C reference; `finish()` waits and returns its durations.
final class CReferenceProcess {
    let process = Process()
    let pipe = Pipe()

    init(_ path: String, server: String, channels: Int, cycles: Int) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [server, String(channels), String(cycles)]
        process.standardOutput = pipe
        try process.run()
    }

    func finish() -> [UInt64] {
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { fatalError("C reference failed (\(process.terminationStatus))") }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { UInt64($0) }
    }
}

/// The measurement session under test: a passthrough render block.
func startSwiftSession(server: String, channels: Int, recorder: CycleCostRecorder) throws -> AudioSession {
    let session = AudioSession(clientName: "swift-session", serverName: server)
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
    session.setCycleCostRecorder(recorder)
    try session.setActive(true)
    return session
}

LibraryMessages.silence()
let options = Options(Array(CommandLine.arguments.dropFirst()))
let server = try LoopbackServer(name: "jas-bench-\(getpid())", loopbackChannels: options.channelCounts.max()!,
                                period: options.period)
defer { server.stop() }
print("server \(server.name): 48000 Hz, period \(options.period) frames; \(options.rounds) rounds of "
      + "\(options.cycles) cycles, all clients running in the same cycles")
print("| channels | C median (ns) | C p99 (ns) | C in-process median (ns) | Swift median (ns) | Swift p99 (ns) "
      + "| median ratio Swift/C | p99 ratio Swift/C |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
for channels in options.channelCounts {
    var cSamples: [UInt64] = [], inProcessSamples: [UInt64] = [], swiftSamples: [UInt64] = []
    for _ in 0..<options.rounds {
        let warmUp = 300
        let recorder = CycleCostRecorder(capacity: options.cycles + 2 * warmUp)
        let session = try startSwiftSession(server: server.name, channels: channels, recorder: recorder)
        let external = try CReferenceProcess(options.cReference, server: server.name, channels: channels,
                                             cycles: options.cycles)
        let inProcess = InProcessReference(cycles: options.cycles) { durations in
            cref_passthrough_run(server.name, Int32(channels), Int32(options.cycles), durations)
        }
        cSamples += external.finish()
        inProcessSamples += inProcess.finish()
        while !recorder.isFull { usleep(10_000) }
        try session.setActive(false)
        session.close()
        // The Swift cycles that ran while the C clients did: skip the start.
        swiftSamples += recorder.samples.dropFirst(2 * warmUp)
    }
    let c = Percentiles(cSamples), inProcess = Percentiles(inProcessSamples), swift = Percentiles(swiftSamples)
    print(String(format: "| %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |", channels, c.median, c.p99,
                 inProcess.median, swift.median, swift.p99, swift.median / c.median, swift.p99 / c.p99))
}
