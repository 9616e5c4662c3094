#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JackKit
import JackRuntime
import Synchronization

/// A private headless jackd started for a test or a self-test: dummy backend,
/// `-L` loopback ports, a unique server name, stopped by its own PID.
///
/// `loopback:playback_N` (inputs) come back on `loopback:capture_N` (outputs)
/// one period later, bit-identical.
///
/// The server is tied to the thread that starts it: when that thread (or the
/// whole process) dies, the kernel stops the server. Start servers from a
/// thread that outlives them, such as the main thread.
public final class LoopbackServer: @unchecked Sendable { // `pid` and `pidFile` are set in init only; the rest is immutable or atomic
    /// The server name clients pass (or set as `JACK_DEFAULT_SERVER`).
    public let name: String
    /// The jackd process.
    public private(set) var pid: pid_t
    /// Sample rate the dummy backend runs at, Hz.
    public let sampleRate: Int
    /// Period the server started with, frames.
    public let period: Int
    /// Number of loopback port pairs.
    public let loopbackChannels: Int
    /// Where jackd's stdout and stderr go.
    public let logPath: String
    /// When the readiness probe had its answer, nanoseconds on
    /// `MonotonicClock` (the clock of the events' stamps): the server had
    /// taken a client by then (0 until it answered).
    public private(set) var answeredAt: UInt64 = 0
    /// With `holdsProbe`, the probe's client, open until the server stops.
    private let heldProbe = Mutex<Client?>(nil)
    private let stopped = Atomic<Bool>(false)
    private var pidFile: String?

    /// What can go wrong starting a server.
    public enum Failure: Error, CustomStringConvertible {
        /// No jackd on PATH.
        case jackdNotFound
        /// jackd could not be spawned.
        case spawnFailed(errno: Int32)
        /// jackd exited or never accepted a client; the log says why, and
        /// `probe` what the last client this process tried to open was told.
        case notReady(server: String, log: String, probe: String?)
        /// jackd hung at start on a lock in JACK's metadata store that no
        /// running program holds: the store was not removed because `users`
        /// (other programs) run in it, or (none) it was and jackd hung again.
        case metadataStoreLocked(server: String, lock: String, users: [String])

        public var description: String {
            switch self {
            case .jackdNotFound:
                return "jackd not found on PATH: install it with `apt-get install jackd2` (`make run` does)"
            case let .spawnFailed(code):
                return "could not start jackd: \(String(cString: strerror(code)))"
            case let .notReady(server, log, _) where log.contains("Too many servers already active"):
                return "jackd '\(server)' could not register: all 8 server slots of /dev/shm/jack-shm-registry "
                    + "are held by running servers; stop one (jack_control/killall jackd) and retry"
            case let .metadataStoreLocked(server, lock, users):
                return "jackd '\(server)' hung at start: \(lock)"
                    + (users.isEmpty ? ", again after the store was removed"
                        : "; not removed because " + users.joined(separator: ", ") + " run in it: stop them, "
                            + "remove the store, and start again")
            case let .notReady(server, log, probe):
                return "jackd '\(server)' did not accept clients"
                    + (probe.map { " (this process's last try: \($0))" } ?? "")
                    + "; \(LoopbackServer.metadataStoreState()); its log:\n\(log)"
            }
        }
    }

    /// A name no other server on this machine has: `prefix-PID-N-RANDOM`,
    /// never of a length `jack_lsp -s` cannot take (`safeForJackLsp`).
    public static func uniqueName(prefix: String = "jas-test") -> String {
        let serial = nextSerial.add(1, ordering: .relaxed).newValue
        var name = "\(prefix)-\(getpid())-\(serial)-\(UInt32.random(in: 0..<UInt32.max) % 100_000)"
        while !safeForJackLsp(name) { name += "x" }
        return name
    }

    /// Whether `jack_lsp -s NAME` (jackd2 1.9.21's example client) survives
    /// the name: it copies NAME into a buffer of exactly its length, one byte
    /// short of the terminating zero. That byte lands past the block glibc's
    /// malloc gives when the length is one the block fits exactly (24, 40,
    /// 56, ... bytes: 8 more than a multiple of 16, from 24), on the next
    /// block's header, and jack_lsp aborts ("malloc assertion failure in
    /// sysmalloc") before it asks the server anything. Seen by valgrind:
    /// "Invalid write of size 1 ... 0 bytes after a block of size 24". Other
    /// JACK clients, jas among them, take any name.
    public static func safeForJackLsp(_ name: String) -> Bool {
        let length = name.utf8.count
        return length < 24 || length % 16 != 8
    }
    private static let nextSerial = Atomic<Int>(0)

    /// Starts `jackd -n NAME -r [serverArguments] -L loopbackChannels -d dummy
    /// -r sampleRate -p period [backendArguments]` (with `environment` added
    /// to this process's, e.g. an LD_PRELOAD clock shim) and waits (up to
    /// `timeout` seconds) until a client can connect. `realtime`: `-R`
    /// instead of `-r`, so the server's and its clients' process threads run
    /// SCHED_FIFO where the user may (root, or an `rtprio` limit), and a
    /// busy machine makes far fewer xruns; where the user may not, jackd
    /// says so in its log and runs as with `-r`.
    public init(name: String = LoopbackServer.uniqueName(), loopbackChannels: Int = 2, sampleRate: Int = 48000,
                period: Int = 64, realtime: Bool = false, serverArguments: [String] = [], backendArguments: [String] = [],
                environment: [String: String] = [:], timeout: Double = 10, probesFromNewProcesses: Bool = false,
                holdsProbe: Bool = false) throws {
        guard let jackd = Self.findExecutable("jackd") else { throw Failure.jackdNotFound }
        LibraryMessages.silence()
        self.name = name
        self.sampleRate = sampleRate
        self.period = period
        self.loopbackChannels = loopbackChannels
        self.probesFromNewProcesses = probesFromNewProcesses
        self.holdsProbe = holdsProbe
        logPath = NSTemporaryDirectory() + "/\(name).log"
        // setpriv (util-linux) makes the kernel send SIGTERM to jackd when the
        // thread that started it dies, so a crashed test leaves no server behind.
        // Slots of servers that were killed stay taken until freed.
        ServerRegistry.reclaimDeadServers()
        let guardian = Self.findExecutable("setpriv").map { [$0, "--pdeathsig", "TERM", "--"] } ?? []
        let arguments = guardian + [jackd, "-n", name, realtime ? "-R" : "-r"] + serverArguments + ["-L", String(loopbackChannels), "-d", "dummy",
                         "-r", String(sampleRate), "-p", String(period)] + backendArguments
        pid = try Self.spawn(arguments, logPath: logPath, environment: environment)
        notePID()
        do {
            do {
                try waitUntilReady(timeout: timeout)
            } catch StartHang.metadataStoreLocked(let lock) {
                // Killed jackds and clients (the restart tests kill them on
                // purpose) can leave the store so; JACK never recovers it.
                try removeLockedStore(lock)
                pid = try Self.spawn(arguments, logPath: logPath, environment: environment)
                notePID()
                try waitUntilReady(timeout: timeout)
            }
        } catch {
            stop()
            if case StartHang.metadataStoreLocked(let lock) = error {
                throw Failure.metadataStoreLocked(server: name, lock: lock, users: [])
            }
            throw error
        }
    }

    private func notePID() {
        LiveServers.shared.add(pid)
        // For callers that must clean up after a process that died hard:
        // $JAS_SERVER_PID_DIR/NAME.pid holds the server's PID while it runs.
        if let directory = ProcessInfo.processInfo.environment["JAS_SERVER_PID_DIR"] {
            pidFile = "\(directory)/\(name).pid"
            try? "\(pid)\n".write(toFile: pidFile!, atomically: true, encoding: .utf8)
        }
    }

    /// jackd sleeps on a lock of JACK's metadata store that nothing releases.
    private enum StartHang: Error {
        case metadataStoreLocked(String)
    }

    /// Kills the hung jackd (it takes no SIGTERM before it serves), and
    /// removes the store when no other program uses it (JACK makes it anew);
    /// says so on stderr: a test that caused it should be seen to.
    private func removeLockedStore(_ lock: String) throws {
        _ = Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        forget()
        ServerRegistry.reclaimDeadServers()
        let store = MetadataStore()
        let running = store.runningUsers(besides: pid).map { "\($0.command) (pid \($0.pid))" }
        guard running.isEmpty else { throw Failure.metadataStoreLocked(server: name, lock: lock, users: running) }
        try? store.remove()
        FileHandle.standardError.write(Data("LoopbackServer: jackd '\(name)' hung at start: \(lock); removed it, starting jackd again\n".utf8))
    }

    deinit { stop() }

    /// Stops the server: SIGTERM, then SIGKILL after 3 s, and reaps it. Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Self.terminate(pid)
        forget()
        ClientLifecycle.shared.retireClients(ofStoppedServer: name)
        heldProbe.withLock { $0 = nil }
    }

    private func forget() {
        LiveServers.shared.remove(pid)
        if let pidFile { unlink(pidFile) }
    }

    /// Kills the server without letting it shut down cleanly (SIGKILL) and reaps it.
    public func kill() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        forget()
        ClientLifecycle.shared.retireClients(ofStoppedServer: name)
        heldProbe.withLock { $0 = nil }
        // A killed jackd cannot free its registry slot itself.
        ServerRegistry.reclaimDeadServers()
    }

    /// Everything jackd printed so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Whether the jackd process is still running.
    public var isRunning: Bool {
        if stopped.load(ordering: .acquiring) { return false }
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    private func waitUntilReady(timeout: Double) throws {
        let deadline = ContinuousClock.now + .seconds(timeout)
        var probeFailure: String?
        var lastLook = ContinuousClock.now
        while ContinuousClock.now < deadline {
            guard isRunning else { throw Failure.notReady(server: name, log: log, probe: probeFailure) }
            // Not before jackd's socket exists: until then it is making its
            // metadata store, and an open meanwhile can wait 3 s in Berkeley DB.
            if !LibraryVersion.isPipeWire, !ServerProcess.requestSocketExists(serverName: name) {
                // Every 0.1 s: is jackd asleep on a lock of the store that no running program holds?
                if ContinuousClock.now - lastLook >= .milliseconds(100) {
                    lastLook = ContinuousClock.now
                    if let lock = MetadataStore().lockLeftHeld(asSeenBy: pid) {
                        throw StartHang.metadataStoreLocked(lock.description)
                    }
                }
                usleep(2_000)
                continue
            }
            if probesFromNewProcesses {
                if jackLspAnswers() {
                    answeredAt = MonotonicClock.nanoseconds
                    return
                }
            } else {
                do {
                    let probe = try Client.checkedOpen(name: "harness-probe", serverName: name)
                    answeredAt = MonotonicClock.nanoseconds
                    if holdsProbe { heldProbe.withLock { $0 = probe } } else { probe.close() }
                    return
                } catch .metadataStoreLocked(let path, let reason) {
                    // jackd made its socket, then slept on the lock (setting its ports' properties).
                    throw StartHang.metadataStoreLocked("JACK's metadata store '\(path)' is locked (\(reason))")
                } catch {
                    probeFailure = error.description
                }
            }
            usleep(20_000)
        }
        throw Failure.notReady(server: name, log: log, probe: probeFailure)
    }

    /// Whether the readiness probe is `jack_lsp`, a new process each time,
    /// rather than a client of this process: for a caller that removes JACK's
    /// server registry between servers, which this process's libjack would
    /// stay attached to (`RegistryAttachment`). A `jack_lsp` that does not
    /// exit in time is killed and the probe tried again.
    public let probesFromNewProcesses: Bool

    /// Whether the probe's client stays open until the server stops, and is
    /// closed then by the lane as any client of a stopped server is: for a
    /// server started again while other clients come back to it. A probe
    /// closed while one of them registers can wedge libjack in the process
    /// that closes it (jack2 #395: the restart soak's probe did, once in
    /// 1101 restarts); one closed after its server stopped cannot.
    public let holdsProbe: Bool

    /// How long one `jack_lsp` may take before it counts as wedged and is killed, seconds.
    static let probeBound = 5.0

    /// Whether `jack_lsp -s NAME` reaches the server (exits 0 within `probeBound`).
    /// A thread waits for its exit and signals it; a `jack_lsp` that has not
    /// exited by then is killed, and that thread reaps it.
    private func jackLspAnswers() -> Bool {
        guard let lsp = Self.findExecutable("jack_lsp"), let child = try? Self.spawn([lsp, "-s", name], logPath: "/dev/null")
        else { return false }
        let exited = DispatchSemaphore(value: 0)
        let exitStatus = Atomic<Int32>(-1)
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            exitStatus.store(status, ordering: .releasing)
            exited.signal()
        }
        guard exited.wait(timeout: .now() + Self.probeBound) == .success else {
            Glibc.kill(child, SIGKILL)
            exited.wait()
            return false
        }
        return exitStatus.load(ordering: .acquiring) == 0
    }

    /// What the user's metadata store looks like, for a server that did not
    /// start: jackd opens it before it makes its socket, and a store left
    /// locked by a program killed inside it holds every new jackd there (a
    /// clean stop of a server removes the store; nothing else does).
    public static func metadataStoreState(_ store: MetadataStore = MetadataStore()) -> String {
        guard FileManager.default.fileExists(atPath: store.path) else { return "no metadata store at \(store.path)" }
        let damage = store.damage().map { "damaged: \($0.reason)" } ?? "region files whole"
        let users = store.users().map { "\($0.command) (\($0.pid))" }
        let running = ServerRegistry.runningServers().map(\.prefix)
        return "metadata store \(store.path): \(damage); open in: " + (users.isEmpty ? "no process" : users.joined(separator: ", "))
            + "; servers of this user running: " + (running.isEmpty ? "none" : running.joined(separator: ", "))
    }

    static func findExecutable(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        // As Strings: `split`'s Substrings joined with string literals made an array of character arrays, and
        // every directory of PATH was looked up as "[\"/\", \"u\", …]/program" (only the two below were found).
        for directory in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"] {
            let candidate = "\(directory)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    public static func spawn(_ arguments: [String], logPath: String, environment extra: [String: String] = [:]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        environment["JACK_NO_AUDIO_RESERVATION"] = "1"
        let envStrings = environment.map { "\($0.key)=\($0.value)" }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = envStrings.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        // jackd starts with nothing blocked and the usual signals at their
        // defaults, whatever its parent blocks or ignores (jas ignores
        // SIGPIPE): a mask and an ignored signal survive exec, and a jackd
        // that ignores SIGTERM cannot be stopped.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var nothing = sigset_t()
        sigemptyset(&nothing)
        posix_spawnattr_setsigmask(&attributes, &nothing)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE] { sigaddset(&defaults, signalNumber) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let code = posix_spawn(&pid, arguments[0], &actions, &attributes, &argv, &envp)
        if code != 0 { throw Failure.spawnFailed(errno: code) }
        return pid
    }

    static func terminate(_ pid: pid_t) {
        _ = Glibc.kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<300 {
            if waitpid(pid, &status, WNOHANG) != 0 { return }
            usleep(10_000)
        }
        _ = Glibc.kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
    }

    /// Makes SIGINT and SIGTERM stop every server this process started before
    /// the process exits (status 130 for SIGINT, 143 for SIGTERM).
    public static func stopServersOnSignals() {
        LiveServers.shared.installSignalHandlers()
    }
}

/// The PIDs of servers this process started and has not stopped yet, so that
/// a signal can stop them.
final class LiveServers: Sendable {
    static let shared = LiveServers()
    private let pids = Mutex<Set<pid_t>>([])
    private let sources = Mutex<[DispatchSourceSignal]>([])

    func add(_ pid: pid_t) { pids.withLock { _ = $0.insert(pid) } }
    func remove(_ pid: pid_t) { pids.withLock { _ = $0.remove(pid) } }

    func installSignalHandlers() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler { [self] in
                    for pid in pids.withLock({ $0 }) { LoopbackServer.terminate(pid) }
                    exit(128 + signalNumber)
                }
                source.resume()
                sources.append(source)
            }
        }
    }
}
