// `make soak` (1000 restarts; `make test` runs 5 of them): `jas monitor`,
// `jas record` and `jas meter` together against one jackd that is stopped and
// restarted over and over (SIGTERM and SIGKILL in turn, down 0.05–1 s, chosen
// by a seeded generator) while another client comes and goes every 100 ms
// (`jack_lsp`). Per restart: how long after the new jackd accepts clients
// each command says it is back. At the end: each command's threads, open file
// descriptors and resident memory against the 10th restart, and the
// recording's length against the wall time it ran (restarts are written as
// silence of their length). jack_capture, when installed, runs beside them
// as the anchor that does not recover. Exits 1 when a command did not come
// back within 10 s, grew, or the take's length is off.
//
// usage: restart-soak [--restarts N] [--jas PATH] [--sigterm-only]
// (each comeback over 0.5 s is listed with its round and monotonic times, to
// lay beside a JACKKIT_TRACE file of the commands' steps)
import CJack
import Foundation
import JackKit
import JackRuntime
import LoopbackHarness
import Synchronization

LibraryMessages.silence()
LoopbackServer.stopServersOnSignals()
var restarts = 1000
var sigtermOnly = false
var jas = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jas").path
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--restarts": restarts = Int(arguments.popFirst() ?? "") ?? restarts
    case "--jas": jas = arguments.popFirst() ?? jas
    case "--sigterm-only": sigtermOnly = true
    default:
        print("usage: restart-soak [--restarts N] [--jas PATH] [--sigterm-only]")
        exit(2)
    }
}

/// A command under test: its JSON Lines, each with the monotonic time it was read.
final class Watched: @unchecked Sendable {
    let name: String
    let process = Process()
    let backEvent: String
    private let lock = NSLock()
    private var read: [(at: UInt64, object: [String: Any])] = []
    private var diagnostics = ""

    /// What the command wrote on stderr.
    var stderr: String { lock.withLock { diagnostics } }
    private var partial = Data()

    init(_ name: String, _ arguments: [String], backEvent: String, jas: String) throws {
        self.name = name
        self.backEvent = backEvent
        process.executableURL = URL(fileURLWithPath: jas)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        let errors = Pipe()
        process.standardError = errors
        errors.fileHandleForReading.readabilityHandler = { [self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            lock.withLock { diagnostics += String(decoding: data, as: UTF8.self) }
        }
        output.fileHandleForReading.readabilityHandler = { [self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            partial.append(data)
            let now = cjack_monotonic_nanoseconds()
            while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                let line = partial[partial.startIndex..<newline]
                partial.removeSubrange(partial.startIndex...newline)
                if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                    lock.withLock { read.append((now, object)) }
                }
            }
        }
        try process.run()
    }

    /// How many lines with this event so far, and the time of the last one.
    func count(_ event: String) -> (count: Int, last: UInt64) {
        lock.withLock {
            let matching = read.filter { $0.object["event"] as? String == event }
            return (matching.count, matching.last?.at ?? 0)
        }
    }

    func last(_ event: String) -> [String: Any]? {
        lock.withLock { read.last { $0.object["event"] as? String == event }?.object }
    }

    var usage: (threads: Int, descriptors: Int, residentKiB: Int) {
        let base = "/proc/\(process.processIdentifier)"
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "\(base)/task").count) ?? 0
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "\(base)/fd").count) ?? 0
        let statm = (try? String(contentsOfFile: "\(base)/statm", encoding: .utf8)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return (threads, descriptors, pages * 4)
    }
}

func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(2_000)
    }
    return true
}

let name = "jas-soak-\(getpid())"
var server = try LoopbackServer(name: name, period: 256)
let folder = NSTemporaryDirectory() + "jas-soak-\(getpid())"
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let take = "\(folder)/take.wav"
let commands = [
    try Watched("monitor", ["monitor", "--server", name, "--json"], backEvent: "mediaServicesWereReset", jas: jas),
    try Watched("record", ["record", "--server", name, "--ports", "loopback:capture_1", "--output", take, "--bits", "16",
                           "--json"], backEvent: "server_back", jas: jas),
    try Watched("meter", ["meter", "--server", name, "--ports", "loopback:capture_1", "--interval", "1", "--json"],
                backEvent: "mediaServicesWereReset", jas: jas),
]
let recorder = commands[1]
let observer = try Client(name: "soak-observer", serverName: name)
guard waitUntil(20, {
    recorder.count("started").count == 1 && commands[2].count("reading").count > 0
        && !observer.portNames(matching: "^jas-monitor:").isEmpty
}) else {
    print("restart-soak: the commands did not start")
    exit(1)
}
observer.close()

// The anchor: jack_capture, if installed, records the same port.
var anchor: Process?
if let capture = ["/usr/bin/jack_capture", "/usr/local/bin/jack_capture"].first(where: FileManager.default.isExecutableFile) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: capture)
    process.arguments = ["-s", name, "-p", "loopback:capture_1", "-dc", "\(folder)/anchor.wav"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try? process.run()
    anchor = process
}

// Another client coming and going every 100 ms.
let churn = ClientChurn(server: name)

/// Down times from a seeded generator, so that two runs restart alike.
struct DownTimes {
    var state: UInt64 = 0x5eed
    mutating func next() -> Double {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return 0.05 + 0.95 * Double(state >> 11) / Double(1 << 53)
    }
}
var downTimes = DownTimes()
var backDelays: [String: [Double]] = [:]
/// Comebacks that took more than a second: which command, after which signal, how long the server was down.
var slowComebacks: [(command: String, killed: Bool, down: Double, back: Double)] = []
var failures: [String] = []
var baseline: [String: (threads: Int, descriptors: Int, residentKiB: Int)] = [:]
var anchorSurvived: Bool?
let started = Date()
for round in 1...restarts {
    let before = commands.map { $0.count($0.backEvent).count }
    let killed = !sigtermOnly && round % 2 == 0
    let stoppedAt = cjack_monotonic_nanoseconds()
    if killed { server.kill() } else { server.stop() }
    let down = downTimes.next()
    usleep(UInt32(down * 1_000_000))
    do {
        server = try LoopbackServer(name: name, period: 256)
    } catch {
        // Said, and the tools stopped below: a thrown error would leave them running.
        failures.append("round \(round): the server did not come back: \(error)")
        break
    }
    let acceptedAt = cjack_monotonic_nanoseconds()
    for (command, count) in zip(commands, before) {
        guard command.process.isRunning else {
            failures.append("round \(round): jas \(command.name) exited with status \(command.process.terminationStatus): "
                            + command.stderr.suffix(400))
            continue
        }
        if waitUntil(10, { command.count(command.backEvent).count > count }) {
            let back = command.count(command.backEvent).last
            let delay = back > acceptedAt ? Double(back - acceptedAt) / 1e9 : 0
            backDelays[command.name, default: []].append(delay)
            if delay > 1 { slowComebacks.append((command.name, killed, down, delay)) }
            if delay > 0.5 {
                print("restart-soak: round \(round) (\(killed ? "SIGKILL" : "SIGTERM")): jas \(command.name) back "
                      + String(format: "%.3f s after the server accepted (monotonic ms: stop %.1f, accepted %.1f, back %.1f)",
                               delay, Double(stoppedAt) / 1e6, Double(acceptedAt) / 1e6, Double(back) / 1e6))
            }
        } else {
            failures.append("round \(round) (\(killed ? "SIGKILL" : "SIGTERM")): jas \(command.name) not back within 10 s")
        }
    }
    if round == 1, let anchor { anchorSurvived = anchor.isRunning }
    if round == min(10, restarts) {
        usleep(300_000)
        for command in commands { baseline[command.name] = command.usage }
    }
    if round % 100 == 0 { print("restart-soak: \(round) restarts, \(failures.count) failures"); fflush(nil) }
    if failures.count > 10 { break }
}
churn.stop()
usleep(300_000)
var growth: [String: (threads: Int, descriptors: Int, residentKiB: Int)] = [:]
for command in commands where command.process.isRunning {
    let now = command.usage
    if let base = baseline[command.name] {
        growth[command.name] = (now.threads - base.threads, now.descriptors - base.descriptors, now.residentKiB - base.residentKiB)
    }
}
// The take runs from the recorder's "started" line to the SIGINT.
let wall = Double(cjack_monotonic_nanoseconds() - recorder.count("started").last) / 1e9
for command in commands where command.process.isRunning { kill(command.process.processIdentifier, SIGINT) }
_ = waitUntil(30) { commands.allSatisfy { !$0.process.isRunning } }
anchor.map { if $0.isRunning { kill($0.processIdentifier, SIGINT) } }
server.stop()

let written = (recorder.last("summary")?["frames_written"] as? Int) ?? 0
let takeSeconds = Double(written) / 48000
print(String(format: "restart-soak: %d restarts in %.0f s (SIGTERM and SIGKILL in turn, down 0.05–1 s, jack_lsp every 100 ms)",
             restarts, Date().timeIntervalSince(started)))
for command in commands {
    let delays = (backDelays[command.name] ?? []).sorted()
    guard !delays.isEmpty else { continue }
    let growthText = growth[command.name].map { "threads \($0.threads >= 0 ? "+" : "")\($0.threads), fds \($0.descriptors >= 0 ? "+" : "")\($0.descriptors), RSS \($0.residentKiB >= 0 ? "+" : "")\($0.residentKiB) KiB" } ?? "n/a"
    print(String(format: "  jas %-8@ back after the server: median %.3f s, p99 %.3f s, max %.3f s; since restart %d: %@",
                 command.name as NSString, delays[delays.count / 2], delays[min(delays.count - 1, delays.count * 99 / 100)],
                 delays.last!, min(10, restarts), growthText as NSString))
}
if !slowComebacks.isEmpty {
    let killed = slowComebacks.filter(\.killed)
    let downs = slowComebacks.map(\.down).sorted()
    print(String(format: "  back after more than 1 s: %d times (%d after SIGKILL, %d after SIGTERM; server down %.2f–%.2f s before them)",
                 slowComebacks.count, killed.count, slowComebacks.count - killed.count, downs.first!, downs.last!))
}
print(String(format: "  take: %.2f s written over %.2f s of wall time (%+.2f s)", takeSeconds, wall, takeSeconds - wall))
if let anchorSurvived {
    print("  jack_capture (anchor): \(anchorSurvived ? "still running" : "exited") after the first restart")
}
if abs(takeSeconds - wall) > 1.0 + wall * 0.002 { failures.append(String(format: "the take holds %.2f s of %.2f s", takeSeconds, wall)) }
for (name, grown) in growth where restarts >= 50 && (grown.threads > 2 || grown.descriptors > 4 || grown.residentKiB > 16 * 1024) {
    failures.append("jas \(name) grew: threads +\(grown.threads), fds +\(grown.descriptors), RSS +\(grown.residentKiB) KiB")
}
for failure in failures { print("restart-soak: FAILED: \(failure)") }
exit(failures.isEmpty ? 0 : 1)
