// `make bench`: `jas latency`'s readings next to jack_delay's (Debian
// jack-delay, Fons Adriaensen's MTDM tool) on the same private jackd in the
// same run: jackd -L 2 (dummy, 48 kHz, 256 frames); our meter on loopback
// pair 1, jack_delay on pair 2, both at once. Per tool: median and spread
// (max − min) of N readings, and the time from starting to the first reading
// (our meter: from LatencyMeter.start(); jack_delay: from spawning it, with
// line-buffered output).
//
// usage: latency-bench [--readings N]
import JackAudioSession
import Foundation
import JackKit
import LoopbackHarness
import Measurement
import Synchronization

LibraryMessages.silence()
var wanted = 100
if let index = CommandLine.arguments.firstIndex(of: "--readings"), index + 1 < CommandLine.arguments.count {
    wanted = Int(CommandLine.arguments[index + 1]) ?? wanted
}
let server = try LoopbackServer(name: "jas-latency-bench-\(getpid())", loopbackChannels: 2, period: 256)
defer { server.stop() }

/// jack_delay's readings as they arrive, with the time since it was spawned.
final class JackDelayReadings: @unchecked Sendable {
    let lines = Mutex<[(seconds: Double, frames: Double)]>([])
    let process = Process()
    var buffer = Data()
    let started = Date()

    init(server: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        process.arguments = ["-oL", "jack_delay", "-O", "loopback:playback_2", "-I", "loopback:capture_2"]
        process.environment = ProcessInfo.processInfo.environment.merging(["JACK_DEFAULT_SERVER": server]) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        readToEnd(pipe) { [self] data in
            buffer.append(data)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                // "    256.000 frames    5.333 ms"
                let fields = line.split(separator: " ")
                if fields.count >= 2, fields[1] == "frames", let frames = Double(fields[0]) {
                    let seconds = Date().timeIntervalSince(started)
                    lines.withLock { $0.append((seconds, frames)) }
                }
            }
        }
        try process.run()
    }

    var count: Int { lines.withLock { $0.count } }
}

func summary(_ values: [Double]) -> (median: Double, spread: Double) {
    let sorted = values.sorted()
    return (sorted[sorted.count / 2], sorted.last! - sorted.first!)
}

let reference = try JackDelayReadings(server: server.name)
var configuration = LatencyMeter.Configuration(serverName: server.name, outputPort: "loopback:playback_1",
                                               inputPort: "loopback:capture_1")
configuration.calibration = nil
let meter = LatencyMeter(configuration: configuration)
let startedAt = Date()
try meter.start()
var ours: [Double] = []
var firstValidAfter: Double?
var invalid = 0
var spoiltByXruns = 0
// Under a storm of xruns (a loaded machine: jackd without real-time
// scheduling) every window is spoilt and no valid reading can come: the
// meter says so with readings flagged `xrun`, and the run ends after
// enough of them, saying so, instead of waiting for ever.
let patience = max(30, wanted)
while ours.count < wanted, invalid < patience, let reading = meter.nextReading(timeout: 10) {
    if let frames = reading.measuredFrames, reading.valid {
        if firstValidAfter == nil { firstValidAfter = Date().timeIntervalSince(startedAt) }
        ours.append(frames)
    } else {
        invalid += 1
        if reading.problem == .xrun { spoiltByXruns += 1 }
    }
}
meter.stop()
if ours.count < wanted && invalid >= patience && spoiltByXruns == invalid {
    reference.process.terminate()
    print("latency readings: \(ours.count) valid of \(wanted) wanted; \(invalid) readings in a row spoilt by xruns that "
          + "jackd reported: this machine is too loaded to measure now (no comparison made)")
    exit(0)
}
while reference.count < wanted && reference.process.isRunning { usleep(10_000) }
reference.process.terminate()
let theirs = reference.lines.withLock { $0 }
guard ours.count == wanted, theirs.count >= wanted else {
    fatalError("readings: ours \(ours.count), jack_delay's \(theirs.count) of \(wanted)")
}
let mine = summary(ours)
let jackDelay = summary(theirs.prefix(wanted).map(\.frames))
print("latency readings on loopback, 48 kHz, period 256 (\(wanted) readings each, same server, same time)")
print(String(format: "  jas latency  median %.6f frames  spread %.2e frames  first valid after %.3f s  (%d invalid)",
             mine.median, mine.spread, firstValidAfter ?? -1, invalid))
print(String(format: "  jack_delay   median %.3f frames    spread %.3f frames     first reading after %.3f s",
             jackDelay.median, jackDelay.spread, theirs.first!.seconds))
print("  (jack_delay prints 3 decimals: its spread is at best 0.001 frame as printed)")
