// `make bench`: the analyzer's cost.
//
// 1. SweepAnalysis on a SECONDS-long 20 Hz-20 kHz sweep at 48 kHz through a
//    polynomial (deconvolution, impulse response, harmonics 2 to 9 and the
//    method's floor), CPU seconds in this process (getrusage), next to the
//    same computation in scipy/numpy on the same samples
//    (scripts/sweep-scipy.py, timed by its own process_time around the
//    computation alone). What belongs to the sweep alone (its spectrum, the
//    method's floor, the plans) is made once by both, outside the timing, as
//    a measurement makes it once for all its channels. Median of ROUNDS.
// 2. With --memory: a 60 s sweep at 192 kHz analysed; the process's peak
//    resident memory.
// 3. With --jas PATH: `jas analyze all` on 2 channels of a private jackd's
//    loopback (response, THD, noise, IMD), wall seconds (goal: under 45).
//
// usage: analyzer-bench [--seconds S] [--rounds N] [--memory] [--jas PATH]
import BenchmarkSupport
import Foundation
import Measurement

struct Options {
    var seconds = 10.0
    var rounds = 3
    var memory = false
    var jas: String?

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            switch flag {
            case "--seconds": seconds = Double(rest.popFirst() ?? "") ?? seconds
            case "--rounds": rounds = Int(rest.popFirst() ?? "") ?? rounds
            case "--memory": memory = true
            case "--jas": jas = rest.popFirst()
            default: refuseOption(flag, tool: "analyzer-bench", usage: "usage: analyzer-bench [--seconds S] [--rounds N] [--memory] [--jas PATH]")
            }
        }
    }
}

/// CPU seconds (user + system) this process has used.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// A sweep and what a polynomial device 256 frames away made of it.
func signals(seconds: Double, sampleRate: Int) -> (SweepStimulus, [Float], [Float]) {
    let sweep = SweepStimulus(seconds: seconds, levelDBFS: -6, sampleRate: sampleRate)
    let played = sweep.samples()
    let recorded = [Float](repeating: 0, count: 256) + played.dropLast(256).map { sample -> Float in
        let v = Double(sample)
        return Float(v + 0.02 * v * v + 0.005 * v * v * v)
    }
    return (sweep, played, recorded)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let options = Options(Array(CommandLine.arguments.dropFirst()))
let (sweep, played, recorded) = signals(seconds: options.seconds, sampleRate: 48000)
var swift: [Double] = []
var delay = 0
// What belongs to the sweep alone (transforms, its spectrum, the method's floor) made once, as a measurement makes
// it for all its channels; the reference script does the same outside its timing.
let reference = SweepAnalysis.SweepReference(sweep: sweep, played: played)
for _ in 0..<options.rounds {
    let before = cpuSeconds()
    let analysis = SweepAnalysis.analyse(recorded: recorded, reference: reference)
    swift.append(cpuSeconds() - before)
    delay = analysis.delayFrames
    precondition(analysis.distortion(at: 1000)?.harmonics[2] != nil, "the analysis lost the 2nd harmonic")
}

let folder = NSTemporaryDirectory() + "analyzer-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
try played.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: "\(folder)/played.f32"))
try recorded.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: "\(folder)/recorded.f32"))
let script = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("scripts/sweep-scipy.py").path
let python = Process()
python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
python.arguments = ["python3", script, folder, "48000", String(sweep.startFrequency), String(sweep.endFrequency),
                    String(sweep.rate), String(options.rounds)]
let output = Pipe()
python.standardOutput = output
try python.run()
let reply = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
python.waitUntilExit()
guard python.terminationStatus == 0, let scipy = Double(reply.trimmingCharacters(in: .whitespacesAndNewlines)) else {
    print("analyzer-bench: scipy's reference did not run (make deps installs scipy): \(reply)")
    exit(1)
}
let ours = median(swift)
print(String(format: """
    analyzer: a %.1f s sweep at 48 kHz (deconvolution, impulse response, harmonics 2-9, the method's floor), median of %d
      SweepAnalysis (KissFFT, single precision)   %.3f s CPU   (goal: under 0.5 s)   %@
      scipy/numpy (pocketfft, double precision)   %.3f s CPU
      ratio SweepAnalysis / scipy                 %.2f        (goal: at most 1)      %@
      delay found %d frames (256 put in)
    """, Double(sweep.sweepFrames) / 48000, options.rounds, ours, ours < 0.5 ? "met" : "NOT met", scipy, ours / scipy,
      ours <= scipy ? "met" : "NOT met", delay))

if options.memory {
    let (big, bigPlayed, bigRecorded) = signals(seconds: 60, sampleRate: 192_000)
    let before = cpuSeconds()
    let analysis = SweepAnalysis.analyse(played: bigPlayed, recorded: bigRecorded, sweep: big)
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    print(String(format: "  a 60 s sweep at 192 kHz: %.1f s CPU, peak resident memory %.0f MiB, delay %d frames, H2 at 1 kHz %.2f dB",
                 cpuSeconds() - before, Double(usage.ru_maxrss) / 1024, analysis.delayFrames,
                 analysis.distortion(at: 1000)?.harmonics[2] ?? .nan))
}

if let jas = options.jas {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: jas)
    process.arguments = ["analyze", "all", "--json", "--out", "loopback:playback_1", "--in", "loopback:capture_1",
                         "--out", "loopback:playback_2", "--in", "loopback:capture_2"]
    process.standardOutput = FileHandle.nullDevice
    let start = ContinuousClock.now
    try process.run()
    process.waitUntilExit()
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(String(format: "  jas analyze all, 2 channels (private jackd): %.1f s wall, exit %d   (goal: under 45 s)   %@",
                 seconds, process.terminationStatus, seconds < 45 && process.terminationStatus == 0 ? "met" : "NOT met"))
}
