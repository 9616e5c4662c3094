#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Another machine, as JACK sees one, on this one: a mount namespace with a
/// `/dev/shm` of its own, so that a jackd started in it, and the clients
/// started beside it, share nothing with the servers of this machine: not
/// jackd2's server table, not its sockets, not the per-user metadata store
/// (`/dev/shm/jack_db-UID`, which every server of a user shares and a server's
/// clean stop deletes), not the session registry. The network is this
/// machine's, so netjack2 reaches it on 127.0.0.1.
///
/// A holder process (`sleep`) keeps the namespace while servers in it stop
/// and start again. Everything runs in it through `nsenter`; the holder dies
/// with the thread that made the machine, like `LoopbackServer`'s jackd.
/// Making a mount namespace needs root (CAP_SYS_ADMIN).
public final class SeparateMachine: Sendable {
    /// The holder process; its namespace is the machine.
    public let holder: pid_t
    private let stopped = Atomic<Bool>(false)

    /// Why a machine could not be made.
    public enum Failure: Error, CustomStringConvertible {
        case toolMissing(String)
        case notIsolated(log: String)

        public var description: String {
            switch self {
            case let .toolMissing(tool):
                return "\(tool) not found: it comes with util-linux (apt-get install util-linux)"
            case let .notIsolated(log):
                return "could not give a process a /dev/shm of its own (a mount namespace needs root, CAP_SYS_ADMIN): \(log)"
            }
        }
    }

    public init(timeout: Double = 5) throws {
        for tool in ["unshare", "nsenter", "setpriv", "mount", "sleep"] where LoopbackServer.findExecutable(tool) == nil {
            throw Failure.toolMissing(tool)
        }
        let logPath = NSTemporaryDirectory() + "/jas-machine-\(getpid())-\(UInt32.random(in: 0..<UInt32.max)).log"
        defer { unlink(logPath) }
        let script = "mount -t tmpfs -o mode=1777 jas-machine /dev/shm && exec sleep 2147483647"
        holder = try LoopbackServer.spawn([LoopbackServer.findExecutable("setpriv")!, "--pdeathsig", "TERM", "--",
                                           LoopbackServer.findExecutable("unshare")!, "--mount", "--ipc", "--propagation", "private",
                                           "--", "/bin/sh", "-c", script], logPath: logPath)
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if isolated { return }
            var status: Int32 = 0
            if waitpid(holder, &status, WNOHANG) != 0 { break }
            usleep(10_000)
        }
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        stop()
        throw Failure.notIsolated(log: log.isEmpty ? "the holder did not get there within \(timeout) s" : log)
    }

    deinit { stop() }

    /// The machine's own `/dev/shm` as seen from this one (through the holder's root).
    public var sharedMemoryPath: String { "/proc/\(holder)/root/dev/shm" }

    /// Whether the holder runs with a `/dev/shm` other than ours: a file system
    /// of its own (another device number).
    private var isolated: Bool {
        var ours = stat(), theirs = stat()
        guard stat("/dev/shm", &ours) == 0, stat(sharedMemoryPath, &theirs) == 0 else { return false }
        return ours.st_dev != theirs.st_dev
    }

    /// `arguments` as a command that runs in this machine.
    public func command(_ arguments: [String]) -> [String] {
        [LoopbackServer.findExecutable("nsenter")!, "--target", String(holder), "--mount", "--ipc", "--"] + arguments
    }

    /// Starts `arguments` in this machine as `LoopbackServer` starts jackd:
    /// nothing blocked, the usual signals at their defaults, no audio device
    /// reservation, its output in `logPath` (a test process's thread may
    /// block or ignore signals, and those survive `exec`).
    public func spawn(_ arguments: [String], logPath: String) throws -> MachineProgram {
        MachineProgram(pid: try LoopbackServer.spawn(command(arguments), logPath: logPath))
    }

    /// Ends the holder; the namespace goes with the last process in it. Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        LoopbackServer.terminate(holder)
    }
}

/// A program started in a `SeparateMachine`, reaped by its PID.
public final class MachineProgram: Sendable {
    public let processIdentifier: pid_t
    private let exited = Atomic<Bool>(false)

    init(pid: pid_t) { processIdentifier = pid }

    /// Whether it still runs (reaps it once it has ended).
    public var isRunning: Bool {
        if exited.load(ordering: .acquiring) { return false }
        var status: Int32 = 0
        guard waitpid(processIdentifier, &status, WNOHANG) == processIdentifier else { return true }
        exited.store(true, ordering: .releasing)
        return false
    }

    /// Waits until it has ended, and reaps it.
    public func waitUntilExit() {
        guard !exited.load(ordering: .acquiring) else { return }
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) < 0 && errno == EINTR {}
        exited.store(true, ordering: .releasing)
    }
}
