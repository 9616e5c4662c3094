import CSpawn
import Foundation
import JackRuntime
import Synchronization

/// A shell command the user asked to run when something happens (`--on-silence`,
/// `--on-signal`): run with `/bin/sh -c`, the event's facts in its
/// environment, its output on our stderr (never in the JSON on stdout), in a
/// process group of its own. It inherits no descriptor but standard input
/// (`/dev/null`), output and error: not the take's files, its log, its
/// manifest or a FIFO, whose reader would otherwise wait for an end of file
/// as long as a hook, or a daemon it starts, lives on.
///
/// Started with posix_spawn and waited for by a thread of its own per run
/// (`waitpid` on that process only), so a slow or stuck command delays
/// nothing: not capture, not the log, not the next command, not the end of
/// the take. (Foundation's Process was the cause of exactly that: a second
/// command while a first one slept froze the disk thread until it ended.)
/// A failure (not started, non-zero status, killed) is reported. At the end
/// of the take, `finish(within:)` waits a bounded time for commands still
/// running, then ends them (SIGTERM to their group, SIGKILL a second later).
public final class HookCommand: Sendable {
    /// The shell command line, run with `/bin/sh -c`.
    public let command: String
    private let onFailure: @Sendable (_ reason: String) -> Void
    /// Commands running now: process id → when it started (monotonic seconds).
    private let running = Mutex<[pid_t: Double]>([:])
    /// Rung each time a command ends: `finish` looks again then.
    private let endedBell = CycleBell()
    /// Ids this object ended itself at the end of the take (their signal is no failure).
    private let ended = Mutex<Set<pid_t>>([])

    /// A hook running `command`; `onFailure` hears why a run failed.
    public init(command: String, onFailure: @escaping @Sendable (_ reason: String) -> Void) {
        self.command = command
        self.onFailure = onFailure
    }

    /// Starts the command with `environment` added to ours; returns at once.
    public func run(environment: [String: String]) {
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, 2, 1)
        let closing = cspawn_close_from(&actions, 3)
        guard closing == 0 else {
            onFailure("could not start /bin/sh: closing the take's descriptors in it failed: \(String(cString: strerror(closing)))")
            return
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, so that ending it ends what it started too (a `sleep` under the shell).
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        let arguments: [String] = ["/bin/sh", "-c", command]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { (text: String) in strdup(text) } + [nil]
        let pairs: [String] = merged.map { "\($0.key)=\($0.value)" }
        let envp: [UnsafeMutablePointer<CChar>?] = pairs.map { (text: String) in strdup(text) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp)
        guard code == 0 else {
            onFailure("could not start /bin/sh: \(String(cString: strerror(code)))")
            return
        }
        running.withLock { $0[pid] = Self.now }
        let child = pid
        let thread = Thread { [self] in wait(for: child) }
        thread.name = "jas-hook-wait"
        thread.start()
    }

    /// Waits for `pid` to end, and reports how it ended.
    private func wait(for pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        running.withLock { _ = $0.removeValue(forKey: pid) }
        endedBell.ring()
        let endedByUs = ended.withLock { $0.contains(pid) }
        let signal = status & 0x7F, exitStatus = (status >> 8) & 0xFF
        if signal != 0 {
            if !endedByUs { onFailure("killed by signal \(signal)") }
        } else if exitStatus != 0 {
            onFailure("exited with status \(exitStatus)")
        }
    }

    /// Commands still running.
    var runningCount: Int { running.withLock { $0.count } }

    /// At the end of the take: waits up to `seconds` for the commands still
    /// running, then ends each (SIGTERM to its group, SIGKILL a second later
    /// if need be). Returns a sentence per command it had to end, for the log.
    public func finish(within seconds: Double) -> [String] {
        endedBell.wait(seconds: seconds) { runningCount == 0 }
        let left = running.withLock { $0 }
        guard !left.isEmpty else { return [] }
        ended.withLock { $0.formUnion(left.keys) }
        for pid in left.keys { kill(-pid, SIGTERM) }
        endedBell.wait(seconds: 1) { runningCount == 0 }
        let stubborn = running.withLock { Set($0.keys) }
        for pid in stubborn { kill(-pid, SIGKILL) }
        return left.map { pid, started in
            String(format: "still running %.1f s after it started, %.1f s after the take ended: ended with %@",
                   Self.now - started, seconds, stubborn.contains(pid) ? "SIGKILL (SIGTERM did not end it)" : "SIGTERM")
        }
    }

    private static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
