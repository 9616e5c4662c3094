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
// With --remove-registry, JACK's server registry (/dev/shm/jack-shm-registry)
// is removed at every restart while no jackd runs, as `rm /dev/shm/jack*` or
// systemd-logind's RemoveIPC=yes do: each command then says so and starts
// itself again, and is back at its first event after that (monitor: a route,
// record: a take started in its next file, meter: a reading). The take's
// length is not checked then (what falls between two processes is not
// written), its files are: one more than the restarts, each after the first
// saying why it started. It refuses to run beside another jackd.
//
// usage: restart-soak [--restarts N] [--jas PATH] [--sigterm-only] [--remove-registry]
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
var removeRegistry = false
var jas = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jas").path
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--restarts": restarts = Int(arguments.popFirst() ?? "") ?? restarts
    case "--jas": jas = arguments.popFirst() ?? jas
    case "--sigterm-only": sigtermOnly = true
    case "--remove-registry": removeRegistry = true
    default:
        print("usage: restart-soak [--restarts N] [--jas PATH] [--sigterm-only] [--remove-registry]")
        exit(2)
    }
}

/// The bytes of one pipe not yet split into lines (only its reader thread touches them).
final class LineBuffer: @unchecked Sendable {
    private var data = Data()
    func append(_ more: Data) { data.append(more) }
    func nextLine() -> Data? {
        guard let newline = data.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let line = Data(data[data.startIndex..<newline])
        data.removeSubrange(data.startIndex...newline)
        return line
    }
}

/// A command under test: its JSON Lines, each with the monotonic time it was read.
final class Watched: @unchecked Sendable {
    let name: String
    let backEvent: String
    /// The event that shows the command back after it started itself again (--remove-registry).
    let restartEvent: String
    /// When it said it starts again, each time (monotonic ns).
    private var restarts: [UInt64] = []
    private let lock = NSLock()
    private var read: [(at: UInt64, object: [String: Any])] = []
    private var diagnostics = ""

    /// What the command wrote on stderr.
    var stderr: String { lock.withLock { diagnostics } }

    init(_ name: String, _ arguments: [String], backEvent: String, restartEvent: String, jas: String) throws {
        self.name = name
        self.backEvent = backEvent
        self.restartEvent = restartEvent
        self.arguments = arguments
        self.jas = jas
        process = try launch()
    }

    private let arguments: [String]
    private let jas: String
    /// The command's process now (a new one each time the soak, as its supervisor, started it again).
    private(set) var process = Process()
    /// The exits the soak started the command again after: the status and the end of stderr.
    private(set) var exits: [(status: Int32, said: String)] = []

    private func launch() throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jas)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        let errors = Pipe()
        process.standardError = errors
        readToEnd(errors) { [self] data in
            let text = String(decoding: data, as: UTF8.self)
            let now = cjack_monotonic_nanoseconds()
            let said = text.components(separatedBy: "starting again in a new process").count - 1
            lock.withLock {
                diagnostics += text
                restarts += Array(repeating: now, count: said)
            }
        }
        let partial = LineBuffer()
        readToEnd(output) { [self] data in
            partial.append(data)
            let now = cjack_monotonic_nanoseconds()
            while let line = partial.nextLine() {
                if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                    lock.withLock { read.append((now, object)) }
                }
            }
        }
        try process.run()
        return process
    }

    /// As systemd's `Restart=on-failure` would: a command that exited is
    /// started again at once, with the same arguments, and the exit noted
    /// (75 is the wedge's asked-for restart; any other status a failure).
    func superviseIfExited() {
        guard !process.isRunning else { return }
        process.waitUntilExit()
        exits.append((process.terminationStatus, String(stderr.suffix(400))))
        let now = cjack_monotonic_nanoseconds()
        guard let next = try? launch() else { return }
        process = next
        lock.withLock { restarts.append(now) }
    }

    /// How many lines with this event so far, and the time of the last one.
    func count(_ event: String) -> (count: Int, last: UInt64) {
        lock.withLock {
            let matching = read.filter { $0.object["event"] as? String == event }
            return (matching.count, matching.last?.at ?? 0)
        }
    }

    /// When the command was back after the last time it started again
    /// (said so, or was started again by the soak) since `since`
    /// (monotonic ns): its first `restartEvent` read after that; nil: not yet.
    func backAfterRestart(since: UInt64) -> UInt64? {
        lock.withLock {
            guard let restart = restarts.last(where: { $0 > since }) else { return nil }
            return read.first { $0.at > restart && $0.object["event"] as? String == restartEvent }?.at
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
if removeRegistry, let other = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).first(where: {
    Int32($0) != nil && (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8))?.hasPrefix("jackd") == true
}) {
    print("restart-soak: --remove-registry removes \(RegistryAttachment.path), which every jackd of this machine uses, "
          + "and a jackd runs (PID \(other)): stop it first, or run the soak in a mount namespace of its own")
    exit(2)
}
/// jackd as the soak starts it; with --remove-registry probed from new processes (this one's libjack would stay
/// attached to the registry removed), otherwise by a client of this process held open until the server stops (one
/// closed while the tools came back to the server once wedged the soak's libjack: jack2 #395).
func startServer(probingFromNewProcesses: Bool) throws -> LoopbackServer {
    try LoopbackServer(name: name, period: 256, probesFromNewProcesses: probingFromNewProcesses,
                       holdsProbe: !probingFromNewProcesses)
}
var server = try startServer(probingFromNewProcesses: removeRegistry)
let folder = NSTemporaryDirectory() + "jas-soak-\(getpid())"
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let take = "\(folder)/take.wav"
let commands = [
    try Watched("monitor", ["monitor", "--server", name, "--json"], backEvent: "mediaServicesWereReset",
                restartEvent: "routeChange", jas: jas),
    try Watched("record", ["record", "--server", name, "--ports", "loopback:capture_1", "--output", take, "--bits", "16",
                           "--json"], backEvent: "server_back", restartEvent: "started", jas: jas),
    try Watched("meter", ["meter", "--server", name, "--ports", "loopback:capture_1", "--interval", "1", "--json"],
                backEvent: "mediaServicesWereReset", restartEvent: "reading", jas: jas),
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
    if removeRegistry { unlink(RegistryAttachment.path) }
    let down = downTimes.next()
    usleep(UInt32(down * 1_000_000))
    do {
        server = try startServer(probingFromNewProcesses: removeRegistry)
    } catch {
        // Said, and the tools stopped below: a thrown error would leave them running.
        failures.append("round \(round): the server did not come back: \(error)")
        break
    }
    let acceptedAt = server.answeredAt
    for (command, count) in zip(commands, before) {
        let exitsBefore = command.exits.count
        let backAt: () -> UInt64? = removeRegistry
            ? { command.backAfterRestart(since: stoppedAt) }
            : { command.count(command.backEvent).count > count ? command.count(command.backEvent).last : nil }
        let isBack = waitUntil(10) {
            command.superviseIfExited()
            return backAt() != nil
        }
        for exit in command.exits.dropFirst(exitsBefore) {
            print("restart-soak: round \(round): jas \(command.name) exited with status \(exit.status) and was started "
                  + "again: \(exit.said)")
            if exit.status != 75 || !removeRegistry {
                failures.append("round \(round): jas \(command.name) exited with status \(exit.status): \(exit.said)")
            }
        }
        if isBack {
            let back = backAt()!
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
for command in commands where !command.exits.isEmpty {
    let statuses = command.exits.map { String($0.status) }.joined(separator: ", ")
    print("  jas \(command.name) exited \(command.exits.count) times and was started again by the soak (statuses: \(statuses))")
}
if !slowComebacks.isEmpty {
    let killed = slowComebacks.filter(\.killed)
    let downs = slowComebacks.map(\.down).sorted()
    print(String(format: "  back after more than 1 s: %d times (%d after SIGKILL, %d after SIGTERM; server down %.2f–%.2f s before them)",
                 slowComebacks.count, killed.count, slowComebacks.count - killed.count, downs.first!, downs.last!))
}
if !removeRegistry {
    print(String(format: "  take: %.2f s written over %.2f s of wall time (%+.2f s)", takeSeconds, wall, takeSeconds - wall))
} else {
    print("  (jas meter is back at its first reading after it started again: one --interval of audio, 1 s, after it opened)")
}
if let anchorSurvived {
    print("  jack_capture (anchor): \(anchorSurvived ? "still running" : "exited") after the first restart")
}
if removeRegistry {
    // Each restart is a new process: a file of its own, and a line that says why.
    let manifest = (try? String(contentsOfFile: "\(folder)/take.manifest.jsonl", encoding: .utf8)) ?? ""
    let files = manifest.split(separator: "\n").filter { $0.contains("\"event\":\"opened\"") }.count
    let said = recorder.count("restarted").count
    print("  take: \(files) files for \(restarts) restarts, \(said) of them saying why the logger started again "
          + "(its length is not checked: what falls between two processes is not written)")
    // A logger the soak started again after a wedge (exit 75) may have left before it opened its file, and does
    // not say "restarted" (nobody told it why).
    let relaunched = recorder.exits.count
    if !(restarts + 1...restarts + 1 + relaunched).contains(files) || said + relaunched < restarts {
        failures.append("the take has \(files) files and \(said) restarts said, for \(restarts) restarts and "
                        + "\(relaunched) starts by the soak")
    }
} else if abs(takeSeconds - wall) > 1.0 + wall * 0.002 {
    failures.append(String(format: "the take holds %.2f s of %.2f s", takeSeconds, wall))
}
for (name, grown) in growth where restarts >= 50 && (grown.threads > 2 || grown.descriptors > 4 || grown.residentKiB > 16 * 1024) {
    failures.append("jas \(name) grew: threads +\(grown.threads), fds +\(grown.descriptors), RSS +\(grown.residentKiB) KiB")
}
for failure in failures { print("restart-soak: FAILED: \(failure)") }
exit(failures.isEmpty ? 0 : 1)
