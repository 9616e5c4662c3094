// `make bench`: how fast sessions in different processes yield to each other.
//
// * interrupt: from the moment `jas interrupt` asks for its activation (the
//   time it prints, JACK's clock) to the first cycle in which the `jas play`
//   it interrupts is silent on the loopback;
// * unduck: from the SIGKILL of a ducking `jas play --duck` to the first cycle
//   in which the ducked `jas play` is louder by 3 dB (its release has begun),
//   and to the first at its full level again (within 1 dB: the release ramps
//   over 10 ms).
//
// Both are heard by a plain JACK client of this process on
// loopback:capture_1, so they include the loopback's one period (5.3 ms at
// the 256 frames used here). Each `--jas` given is measured in turn, on a
// server of its own: `make bench` passes the jas of the commit before the
// session registry (metadata polled) and the current one (inotify + flock).
//
// usage: arbitration-bench [--runs N] [--jas LABEL=PATH ...]
import Foundation
import JackKit
import JackRuntime
import LoopbackHarness
import Synchronization

LibraryMessages.silence()
LoopbackServer.stopServersOnSignals()
var runs = 50
var versions: [(label: String, path: String)] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--runs": runs = Int(arguments.popFirst() ?? "") ?? runs
    case "--jas":
        let value = arguments.popFirst() ?? ""
        guard let equals = value.firstIndex(of: "=") else {
            print("arbitration-bench: --jas takes LABEL=PATH, got '\(value)'")
            exit(2)
        }
        versions.append((String(value[..<equals]), String(value[value.index(after: equals)...])))
    default:
        print("usage: arbitration-bench [--runs N] [--jas LABEL=PATH ...]")
        exit(2)
    }
}
if versions.isEmpty {
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jas")
    versions = [("this build", beside.path)]
}

/// The peak of loopback:capture_1 in each cycle, with the JACK time the cycle
/// ran at, in a ring the real-time thread writes and the bench reads.
final class PeakHistory: @unchecked Sendable {
    static let capacity = 1 << 16
    private let times = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity)
    private let peaks = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
    private let written = Atomic<Int>(0)
    let client: Client

    init(serverName: String) throws {
        client = try Client(name: "arbitration-ear", serverName: serverName)
        let input = try client.registerPort("in", flags: .input)
        try client.setProcessor(RealtimeProcessor(client: client, inputs: [input], outputs: []) { [self] cycle in
            var peak: Float = 0
            for frame in 0..<cycle.frameCount { peak = max(peak, abs(cycle.inputs[0][frame])) }
            let index = written.load(ordering: .relaxed)
            times[index % Self.capacity] = Client.microsecondTime
            peaks[index % Self.capacity] = peak
            written.store(index + 1, ordering: .releasing)
        })
        try client.activate()
        try client.connect("loopback:capture_1", to: "arbitration-ear:in")
    }

    deinit { client.close() }

    /// The time of the first cycle after `start` whose peak satisfies `test`,
    /// waiting up to `timeout` seconds for it.
    func firstCycle(after start: UInt64, timeout: Double = 5, where test: (Float) -> Bool) -> UInt64? {
        let deadline = Date().addingTimeInterval(timeout)
        var index = max(0, written.load(ordering: .acquiring) - 4096)
        while Date() < deadline {
            let end = written.load(ordering: .acquiring)
            while index < end {
                let time = times[index % Self.capacity]
                if time > start && test(peaks[index % Self.capacity]) { return time }
                index += 1
            }
            usleep(1000)
        }
        return nil
    }

    /// Whether the last `cycles` cycles all satisfy `test`.
    func lastCycles(_ cycles: Int, _ test: (Float) -> Bool) -> Bool {
        let end = written.load(ordering: .acquiring)
        guard end >= cycles else { return false }
        return (end - cycles..<end).allSatisfy { test(peaks[$0 % Self.capacity]) }
    }
}

/// A jas process and the JSON objects it printed.
final class JasProcess: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var objects: [[String: Any]] = []
    private var partial = Data()

    init(_ jas: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: jas)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        readToEnd(output) { [self] data in
            lock.withLock {
                partial += data
                while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = partial[partial.startIndex..<newline]
                    partial = Data(partial[partial.index(after: newline)...])
                    if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] { objects.append(object) }
                }
            }
        }
        try process.run()
    }

    func first(event: String, timeout: Double = 10) -> [String: Any]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = lock.withLock({ objects.first { $0["event"] as? String == event } }) { return found }
            usleep(2000)
        }
        return nil
    }

    func stop(_ signal: Int32 = SIGINT) {
        if process.isRunning { kill(process.processIdentifier, signal) }
        process.waitUntilExit()
    }
}

func waitUntil(_ timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(5000)
    }
    return condition()
}

/// What a cycle's peak says of a −20 dBFS-peak sine: 0.1 at full level, 0.01 ducked by 20 dB.
enum Heard {
    static let full: Float = 0.1
    /// Within 1 dB of full.
    static func audible(_ peak: Float) -> Bool { peak > full * 0.891 }
    static func silent(_ peak: Float) -> Bool { peak < 1e-6 }
    static func ducked(_ peak: Float) -> Bool { peak < full * 0.2 && peak > full * 0.05 }
    /// Louder than ducked by more than 3 dB: the release has begun (its ramp takes 10 ms).
    static func rising(_ peak: Float) -> Bool { peak > full * 0.1 * 1.41 }
}

struct Result {
    var interrupt: [Double] = []
    var unduckBegun: [Double] = []
    var unduck: [Double] = []
    var failures: [String] = []
}

func measure(jas: String, runs: Int) throws -> Result {
    let server = try LoopbackServer(name: LoopbackServer.uniqueName(prefix: "arbitration"), period: 256)
    defer { server.stop() }
    let ear = try PeakHistory(serverName: server.name)
    var result = Result()
    let play = ["play", "--server", server.name, "--port", "loopback:playback_1", "--frequency", "750", "--json"]
    let victim = try JasProcess(jas, play + ["--name", "victim"])
    defer { victim.stop() }
    guard waitUntil(10, { ear.lastCycles(20, Heard.audible) }) else {
        result.failures.append("the victim never played")
        return result
    }
    // The first runs of a binary pay for its cold start (seen: 50 ms where
    // the rest gave 30): three of each kind run first and are not counted.
    let warmup = 3
    for run in 1...runs + warmup {
        let counted = run > warmup
        let interrupter = try JasProcess(jas, ["interrupt", "--server", server.name, "--as", "ordinary", "--for", "0.3",
                                               "--name", "interrupter-\(run)", "--json"])
        defer { interrupter.stop() }
        guard let asked = interrupter.first(event: "activating")?["time"] as? UInt64 else {
            result.failures.append("interrupt \(run): jas interrupt printed no activating time (a jas without it?)")
            continue
        }
        if let quiet = ear.firstCycle(after: asked, where: Heard.silent) {
            if counted { result.interrupt.append(Double(quiet - asked) / 1000) }
        } else {
            result.failures.append("interrupt \(run): the victim did not fall silent within 5 s")
        }
        interrupter.process.waitUntilExit()
        if !waitUntil(10, { ear.lastCycles(20, Heard.audible) }) {
            result.failures.append("interrupt \(run): the victim did not resume")
            return result
        }
    }
    for run in 1...runs + warmup {
        let counted = run > warmup
        let ducker = try JasProcess(jas, ["play", "--server", server.name, "--port", "loopback:playback_2", "--duck",
                                          "--name", "ducker-\(run)", "--json"])
        guard waitUntil(10, { ear.lastCycles(10, Heard.ducked) }) else {
            result.failures.append("unduck \(run): the victim was never ducked")
            ducker.stop(SIGKILL)
            continue
        }
        let killed = Client.microsecondTime
        ducker.stop(SIGKILL)
        if let begun = ear.firstCycle(after: killed, where: Heard.rising),
           let back = ear.firstCycle(after: killed, where: Heard.audible) {
            if counted {
                result.unduckBegun.append(Double(begun - killed) / 1000)
                result.unduck.append(Double(back - killed) / 1000)
            }
        } else {
            result.failures.append("unduck \(run): the victim stayed ducked for 5 s after the ducker was killed")
        }
        _ = waitUntil(5) { ear.lastCycles(20, Heard.audible) }
    }
    return result
}

func summary(_ values: [Double]) -> (median: Double, max: Double) {
    let sorted = values.sorted()
    return sorted.isEmpty ? (.nan, .nan) : (sorted[sorted.count / 2], sorted[sorted.count - 1])
}

print("arbitration latency, \(runs) runs each (after 3 not counted), period 256 at 48 kHz (includes the loopback's 5.3 ms)")
print("| jas | interrupt median (ms) | interrupt max (ms) | unduck begun median (ms) | unduck begun max (ms) "
      + "| unduck done median (ms) | unduck done max (ms) |")
print("|---|---:|---:|---:|---:|---:|---:|")
var failed = false
var medians: [(interrupt: Double, unduck: Double)] = []
for version in versions {
    let result = try measure(jas: version.path, runs: runs)
    let interrupt = summary(result.interrupt), begun = summary(result.unduckBegun), unduck = summary(result.unduck)
    medians.append((interrupt.median, begun.median))
    print(String(format: "| %@ | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |", version.label, interrupt.median,
                 interrupt.max, begun.median, begun.max, unduck.median, unduck.max))
    for failure in result.failures { print("  \(version.label): \(failure)") }
    failed = failed || !result.failures.isEmpty
}
if medians.count == 2 {
    print(String(format: "ratio %@/%@ of the medians: interrupt %.2f, unduck begun %.2f", versions[1].label, versions[0].label,
                 medians[1].interrupt / medians[0].interrupt, medians[1].unduck / medians[0].unduck))
}
exit(failed ? 1 : 0)
