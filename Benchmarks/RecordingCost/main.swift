// `make bench`: recording 64 channels at 48 kHz, 32-bit float, for 60 s, with
// everything that records running at once on one server, in the same cycles:
//
// * `jas record` as a user runs it (a process): overruns, xruns, gaps, CPU;
// * `jack_capture` recording the same ports in the same run: its CPU and
//   whatever it reports about overruns;
// * inside this process, the Recording module's recorder with its process
//   callback timed, and the C capture client (interleave into a
//   jack_ringbuffer, as C recorders do) timed the same way: the ratio of
//   their callback costs; and the recorder's disk-thread CPU.
//
// What they record: silence (the loopback ports with nothing played), or
// with `--programme` noise whose level changes every 400 ms
// (`ProgrammePlayer`): a file's true peak is then reached now and then.
//
// usage: record-bench [--jas PATH] [--seconds S] [--channels N] [--period N] [--folder DIR] [--programme]
import JackAudioSession
import BenchmarkSupport
import Capture
import CReference
import Foundation
import JackKit
import JackRuntime
import LoopbackHarness
import Recording
import SoundFile
import Synchronization

struct Options {
    var jas = ".build/release/jas"
    var seconds = 60.0
    var channels = 64
    var period = 256
    var folder = NSTemporaryDirectory() + "jas-record-bench-\(getpid())"
    var programme = false
    /// Also CPU per audio second, each recorder alone (`PerAudioSecond`).
    var perSecond = false

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            switch flag {
            case "--programme": programme = true; continue
            case "--per-second": perSecond = true; continue
            default: break
            }
            let value = rest.popFirst() ?? ""
            switch flag {
            case "--jas": jas = value
            case "--seconds": seconds = Double(value) ?? seconds
            case "--channels": channels = Int(value) ?? channels
            case "--period": period = Int(value) ?? period
            case "--folder": folder = value
            default: refuseOption(flag, tool: "record-bench", usage: "usage: record-bench [--jas PATH] [--seconds S] [--channels N] [--period N] [--folder DIR] [--programme] [--per-second]")
            }
        }
    }
}

/// A command run under bash's `time`, its output and CPU seconds (user, system) collected.
final class TimedCommand {
    let process = Process()
    let output = Pipe()
    let errors = Pipe()

    init(_ command: String, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "TIMEFORMAT='cpu %U %S'; time " + command]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    func finish() -> (stdout: String, stderr: String, cpu: Double) {
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let cpuLine = err.split(separator: "\n").last { $0.hasPrefix("cpu ") } ?? "cpu 0 0"
        let parts = cpuLine.split(separator: " ").dropFirst().compactMap { Double($0) }
        return (String(decoding: out, as: UTF8.self), err, parts.reduce(0, +))
    }
}

/// CPU seconds of this process's thread named `name` (from /proc).
func threadCPUSeconds(named name: String) -> Double? {
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    for task in tasks {
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard comm == name, let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { continue }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3; utime and stime are fields 14 and 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
        return (user + system) / ticks
    }
    return nil
}

func runBenchmark() throws {
    LibraryMessages.silence()
    let options = Options(Array(CommandLine.arguments.dropFirst()))
    try FileManager.default.createDirectory(atPath: options.folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: options.folder) }
    let server = try LoopbackServer(name: "jas-record-bench-\(getpid())", loopbackChannels: options.channels,
                                    period: options.period)
    defer { server.stop() }
    let cycles = Int(options.seconds * 48000) / options.period
    print("server \(server.name): 48000 Hz, period \(options.period) frames, \(options.channels) loopback channels; "
          + "recording \(options.channels) channels of 32-bit float for \(options.seconds) s with four clients at once, "
          + (options.programme ? "a programme (noise at levels from -40 to -6 dBFS changing every 400 ms)" : "of silence"))
    let player = try options.programme ? ProgrammePlayer(serverName: server.name, channels: options.channels, sampleRate: 48000) : nil
    defer { withExtendedLifetime(player) {} }

    // The in-process recorder, its callback timed.
    var configuration = Recorder.Configuration(outputPath: "\(options.folder)/module.wav")
    configuration.serverName = server.name
    configuration.portPatterns = ["loopback:capture_*"]
    configuration.duration = options.seconds
    configuration.clientName = "bench-recorder"
    let recorder = Recorder(configuration: configuration)
    let costs = CycleCostRecorder(capacity: cycles)
    recorder.session.setCycleCostRecorder(costs)
    try recorder.prepare()

    // The C capture client in this process, timed the same way.
    let cCapture = InProcessReference(cycles: cycles) { durations in
        cref_capture_run(server.name, "loopback:capture_", Int32(options.channels), Int32(cycles), durations)
    }

    // jas record and jack_capture as a user runs them.
    let jasRun = try TimedCommand("\(options.jas) record --server \(server.name) --ports 'loopback:capture_*' "
                                  + "--output \(options.folder)/jas.wav --for \(options.seconds) --json")
    let jackCapture = try TimedCommand("jack_capture --no-stdin --disable-console -c \(options.channels) "
                                       + "-p 'loopback:capture*' -d \(Int(options.seconds)) -f wav -b FLOAT "
                                       + "\(options.folder)/jack_capture.wav",
                                       environment: ["JACK_DEFAULT_SERVER": server.name])

    let jasResult = jasRun.finish()
    let captureResult = jackCapture.finish()
    recorder.waitUntilFinished()
    let diskCPU = threadCPUSeconds(named: "jas-record-disk")
    recorder.stop()
    let cSamples = cCapture.finish()

    let summaryLine = jasResult.stdout.split(separator: "\n").last { $0.contains("\"summary\"") } ?? "{}"
    let jasSummary = (try? JSONSerialization.jsonObject(with: Data(summaryLine.utf8)) as? [String: Any]) ?? [:]
    let module = recorder.summary
    let swift = Percentiles(costs.samples), c = Percentiles(cSamples)
    let captureNotes = captureResult.stderr.split(separator: "\n").filter {
        $0.localizedCaseInsensitiveContains("overrun") || $0.localizedCaseInsensitiveContains("xrun")
            || $0.localizedCaseInsensitiveContains("buffer")
    }

    print("")
    print("| recorder | frames written | overruns | xruns | gaps | CPU (s) | CPU per audio second |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    func row(_ name: String, _ frames: Any?, _ overruns: Any?, _ xruns: Any?, _ gaps: Any?, _ cpu: Double?) {
        let cpuText = cpu.map { String(format: "%.2f", $0) } ?? "?"
        let perSecond = cpu.map { String(format: "%.4f", $0 / options.seconds) } ?? "?"
        print("| \(name) | \(frames ?? "?") | \(overruns ?? "?") | \(xruns ?? "?") | \(gaps ?? "?") | \(cpuText) | \(perSecond) |")
    }
    row("jas record (process)", jasSummary["frames_written"], jasSummary["overruns"], jasSummary["xruns"],
        jasSummary["gaps"], jasResult.cpu)
    row("jack_capture (process)", (try? SoundFileReader(path: "\(options.folder)/jack_capture.wav").frames) ?? nil,
        captureNotes.isEmpty ? "none reported" : captureNotes.joined(separator: "; "), "-", "-", captureResult.cpu)
    row("Recording module, disk thread only", module.framesWritten, module.overruns, module.xruns, module.gaps, diskCPU)
    // Like for like: jas record less the work jack_capture does not do.
    if let features = try? FeatureCost(ofFile: "\(options.folder)/jas.wav") {
        let jasCPU = jasResult.cpu, captureCPU = captureResult.cpu
        print("")
        print("| what jas record computes that jack_capture does not, measured alone on jas.wav | CPU (s) |")
        print("|---|---:|")
        print(String(format: "| the file's SHA-256 (read back, as for the manifest) | %.2f |", features.digestSeconds))
        print(String(format: "| loudness (BlockLoudness, 960-frame chunks) | %.2f |", features.loudnessSeconds))
        print(String(format: "| true peak (TruePeakDetector) | %.2f |", features.truePeakSeconds))
        print(String(format: "| together | %.2f |", features.total))
        print(String(format: "\njas record / jack_capture: %.2fx; less that work: %.2fx (%.2f s against %.2f s)",
                     jasCPU / captureCPU, (jasCPU - features.total) / captureCPU, jasCPU - features.total, captureCPU))
        if options.perSecond {
            let rate = try PerAudioSecond(server: server.name, options: options, rounds: options.seconds < 10 ? 1 : 2)
            let features = features.total / options.seconds
            print("")
            print(String(format: "Per audio second, each alone (takes of %.0f s and %.0f s): jas record %.4f s, jack_capture %.4f s "
                         + "(%.2fx); less the work above (%.4f s per audio second): %.2fx", rate.shortTake, rate.longTake,
                         rate.jasSeconds, rate.captureSeconds, rate.jasSeconds / rate.captureSeconds, features,
                         (rate.jasSeconds - features) / rate.captureSeconds))
        }
    }
    print("")
    print(Percentiles.comparisonTable(title: "process callback, \(options.channels) channels",
                                      reference: ("C capture client (interleave into jack_ringbuffer)", c),
                                      swift: ("Recording module (RealtimeCapture)", swift)))
}

try runBenchmark()
