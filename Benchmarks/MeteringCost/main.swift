// `make bench`: jas meter's cost.
//
// 1. `jas meter --file` (every meter on) next to `ffmpeg -af ebur128=peak=true`
//    on the same 60 s files of seeded noise, 2 and 8 channels, 48 kHz float:
//    seconds of audio metered per second of CPU (user + system, bash `time`).
// 2. The process callback of a live 32-channel meter session next to the C
//    capture client doing the same copy, in the same cycles on one server.
// 3. The readers' wake-up: three captures of the same 32 ports in the same
//    cycles, drained as the live meter's reader is (woken every cycle), as the
//    disk writer's is (woken every 20 ms of frames), and as both were before
//    issue 36 (looking every 5 ms): from each cycle's capture to its reader.
//
// usage: meter-bench [--jas PATH] [--seconds S] [--cycles N]
import JackAudioSession
import BenchmarkSupport
import Capture
import CReference
import Foundation
import JackKit
import JackRuntime
import LoopbackHarness
import Metering
import Recording

struct Options {
    var jas = ".build/release/jas"
    var seconds = 60
    var cycles = 4000

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            let value = rest.popFirst() ?? ""
            switch flag {
            case "--jas": jas = value
            case "--seconds": seconds = Int(value) ?? seconds
            case "--cycles": cycles = Int(value) ?? cycles
            default: refuseOption(flag, tool: "meter-bench", usage: "usage: meter-bench [--jas PATH] [--seconds S] [--cycles N]")
            }
        }
    }
}

/// CPU seconds (user + system) of a shell command, from bash's `time`; its exit status.
func cpuSeconds(_ command: String) -> (cpu: Double, status: Int32) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-c", "TIMEFORMAT='cpu %U %S'; time { " + command + " > /dev/null 2>&1; }"]
    let errors = Pipe()
    process.standardError = errors
    try? process.run()
    let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let line = text.split(separator: "\n").last { $0.hasPrefix("cpu ") } ?? "cpu 0 0"
    return (line.split(separator: " ").dropFirst().compactMap { Double($0) }.reduce(0, +), process.terminationStatus)
}

/// Writes `seconds` of seeded white noise at −12 dBFS peak, `channels` wide.
func writeNoise(_ path: String, channels: Int, seconds: Int) throws {
    let writer = try SoundFileWriter(path: path, channels: channels, sampleRate: 48000, format: RecordingFormat())
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    var block = [Float](repeating: 0, count: 4800 * channels)
    for _ in 0..<(seconds * 10) {
        for index in block.indices {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            block[index] = Float(Int64(bitPattern: state) >> 40) / Float(1 << 23) * 0.25
        }
        try block.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 4800) }
    }
    writer.close()
}

func runBenchmark() throws {
    LibraryMessages.silence()
    let options = Options(Array(CommandLine.arguments.dropFirst()))
    let folder = NSTemporaryDirectory() + "jas-meter-bench-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }

    print("1. Metering \(options.seconds) s files (48 kHz, 32-bit float noise), CPU user + system:")
    print("| channels | jas meter --file (CPU s) | audio s per CPU s | ffmpeg ebur128=peak=true (CPU s) | audio s per CPU s | ratio jas/ffmpeg |")
    print("|---:|---:|---:|---:|---:|---:|")
    for channels in [2, 8] {
        let path = "\(folder)/noise-\(channels).wav"
        try writeNoise(path, channels: channels, seconds: options.seconds)
        let ours = cpuSeconds("\(options.jas) meter --file \(path) --json")
        let theirs = cpuSeconds("ffmpeg -nostdin -nostats -hide_banner -i \(path) -af ebur128=peak=true -f null -")
        guard ours.status == 0, theirs.status == 0 else { fatalError("meter-bench: a meter failed on \(path)") }
        let seconds = Double(options.seconds)
        print(String(format: "| %d | %.2f | %.0f | %.2f | %.0f | %.2f |", channels, ours.cpu, seconds / ours.cpu,
                     theirs.cpu, seconds / theirs.cpu, (seconds / ours.cpu) / (seconds / theirs.cpu)))
    }

    let server = try LoopbackServer(name: "jas-meter-bench-\(getpid())", loopbackChannels: 32, period: 256)
    defer { server.stop() }
    var configuration = LiveMeter.Configuration()
    configuration.serverName = server.name
    configuration.portPatterns = ["loopback:capture_*"]
    configuration.clientName = "bench-meter"
    let meter = LiveMeter(configuration: configuration)
    let costs = CycleCostRecorder(capacity: options.cycles + 600)
    meter.session.setCycleCostRecorder(costs)
    try meter.start { _ in }
    let reference = InProcessReference(cycles: options.cycles) { durations in
        cref_capture_run(server.name, "loopback:capture_", 32, Int32(options.cycles), durations)
    }
    let cSamples = reference.finish()
    while !costs.isFull { usleep(10_000) }
    _ = meter.stop()
    let swift = Percentiles(Array(costs.samples.dropFirst(600))), c = Percentiles(cSamples)
    print("")
    print("2. Live meter, 32 channels, 256-frame periods, \(options.cycles) cycles in the same cycles as the C client:")
    print(Percentiles.comparisonTable(title: "process callback", reference: ("C capture client", c),
                                      swift: ("jas meter (RealtimeCapture)", swift)))
    print("")
    try measureReaderWakeups(serverName: server.name, cycles: options.cycles)
}

/// Part 3: three capture sessions on one server, each with a reader that waits its own way.
func measureReaderWakeups(serverName: String, cycles: Int) throws {
    let (ports, sampleRate) = try PortTap.resolve(["loopback:capture_*"], channels: nil, serverName: serverName,
                                                  clientName: "bench-readers")
    let skipped = 200
    let readers: [(name: String, probe: ReaderWakeupProbe)] = [
        ("live meter: woken every cycle", ReaderWakeupProbe(
            channels: ports.count, sampleRate: sampleRate, wakeEvery: 1, wait: .woken, cycles: cycles, skipped: skipped)),
        ("disk writer: woken every 20 ms of frames", ReaderWakeupProbe(
            channels: ports.count, sampleRate: sampleRate, wakeEvery: Recorder.wakeEveryFrames(sampleRate: sampleRate),
            wait: .woken, cycles: cycles, skipped: skipped)),
        ("both before issue 36: looking every 5 ms", ReaderWakeupProbe(
            channels: ports.count, sampleRate: sampleRate, wakeEvery: 1, wait: .polling(milliseconds: 5), cycles: cycles,
            skipped: skipped)),
    ]
    var sessions: [AudioSession] = []
    defer { sessions.forEach { $0.close() } }
    for (index, reader) in readers.enumerated() {
        let session = AudioSession(clientName: "bench-reader-\(index + 1)", serverName: serverName, recordConsent: .givenByCaller)
        sessions.append(session)
        reader.probe.start()
        try PortTap.activate(session, listeningTo: ports, renderBlock: reader.probe.capture.renderBlock)
    }
    while readers.contains(where: { $0.probe.handled.load(ordering: .relaxed) < skipped + cycles }) { usleep(10_000) }
    for reader in readers { reader.probe.stop() }
    print("3. Readers' wake-up, \(ports.count) channels, 256-frame periods, \(cycles) cycles each, in the same cycles: "
          + "from a cycle's capture to its reader")
    print("| reader | wake-ups per second | delay median (ms) | delay p99 (ms) | reader CPU (ms per second) |")
    print("|---|---:|---:|---:|---:|")
    for reader in readers {
        let delays = Percentiles(reader.probe.delays), probe = reader.probe
        print(String(format: "| %@ | %.0f | %.3f | %.3f | %.2f |", reader.name, Double(probe.wakeups) / probe.seconds,
                     delays.median / 1e6, delays.p99 / 1e6, probe.cpuSeconds * 1000 / probe.seconds))
    }
}

try runBenchmark()
