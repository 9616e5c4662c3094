import CJack
import Glibc
import Dispatch
import JackKit
import Synchronization

/// Every `jack_client_open` and `jack_client_close` of the process, one at a
/// time on one lane, each within a bound.
///
/// libjack is process-global: opens and closes share one mutex, and a close
/// that libjack cannot finish (jack2 #395: a notification thread cancelled
/// while it held another mutex) blocks every later open for ever. So the
/// lane serialises them itself, closes a client only once its notification thread
/// is quiet (`NotificationThread`), and once any client's server went away,
/// closes every client before the next open (libjack's open would close and
/// free them all itself, without that care); when a call still does not
/// return within its bound, it calls
/// the library wedged: every later open and close fails at once with
/// `JackError.libraryWedged` instead of hanging. The process must then be
/// restarted; `wedgedReason` says why.
public final class ClientLifecycle: ClientLane {
    /// The one lane of this process.
    public static let shared = ClientLifecycle()

    /// How long an open may take before the library is called wedged, seconds.
    public static let openBound = 15.0
    /// How long a close may take, the wait for its notification thread included, seconds.
    public static let closeBound = 10.0
    /// How long a close waits for the client's notification thread to exit or go quiet, seconds.
    public static let quietBound = 4.0

    private let queue = DispatchQueue(label: "jackruntime.client-lifecycle")
    private let onLane = DispatchSpecificKey<Bool>()
    private let wedge = Mutex<String?>(nil)
    /// The clients of the process not yet closed.
    private let clients = Mutex<[ObjectIdentifier: ClientTeardown]>([:])

    init() {
        queue.setSpecific(key: onLane, value: true)
    }

    /// How many times this process has called `jack_client_open` (for tests
    /// of when a program asks libjack, and for benchmarks).
    public var opensCalled: Int { opens.load(ordering: .relaxed) }
    private let opens = Atomic<Int>(0)

    func noteOpenCalled() { opens.add(1, ordering: .relaxed) }

    /// Why libjack is wedged in this process (nil: it is not).
    public var wedgedReason: String? { wedge.withLock { $0 } }

    /// The metadata store's lock that the wedged call sleeps on (nil: not wedged, or not on one).
    public var wedgedOnLock: MetadataStore.OwnLockWait? { wedgeLock.withLock { $0 } }
    private let wedgeLock = Mutex<MetadataStore.OwnLockWait?>(nil)

    /// Runs `body` on the lane and waits for it at most `bound` seconds. When
    /// it does not return by then, the library is wedged from now on.
    /// `excludingMetadata`: an open or a close, which may make or tear down
    /// libjack's process-wide state (see `LibraryGlobals`).
    func perform<T: Sendable>(_ what: String, within bound: Double, excludingMetadata: Bool = true,
                              _ body: @escaping @Sendable () -> T) throws(JackError) -> T {
        let guarded: @Sendable () -> T = { excludingMetadata ? LibraryGlobals.lifecycle { body() } : body() }
        if let reason = wedgedReason { throw .libraryWedged(reason: reason) }
        if DispatchQueue.getSpecific(key: onLane) == true { return withoutBrokenPipeSignal(guarded) }
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let laneThread = Atomic<Int32>(0)
        queue.async { [self] in
            laneThread.store(cjack_current_tid(), ordering: .releasing)
            // The body runs outside the lock: a caller that timed out reads
            // `result` at once, and must not wait for a body stuck in libjack.
            if wedgedReason == nil {
                let value = withoutBrokenPipeSignal(guarded)
                result.withLock { $0 = value }
            }
            done.signal()
        }
        if let stuck = wait(for: done, within: bound, laneThread: laneThread) {
            // A lane thread asleep on a lock of the metadata store says so
            // (/proc). Otherwise: jack2 #395 needs a close before; an open
            // that hangs without one is stuck in the store too.
            let waited = stuck.lock?.ownerIsGone == true ? "has not returned after" : "did not return within"
            let reason = if let lock = stuck.lock {
                "\(what) \(waited) \(Int(stuck.seconds.rounded())) s: libjack sleeps on a lock in JACK's metadata store "
                    + "(\(lock.region)) " + (lock.ownerIsGone ? "\(lock.holder.dropFirst()): a program killed inside the "
                                             + "store left it held" : "that a program killed inside it left held")
                    + ", and no JACK client can be opened or closed in this process any more: restart the program, once "
                    + "the store is removed (`jas metadata-store repair` removes a locked one)"
            } else if what.hasPrefix("opening") && !closed.load(ordering: .relaxed) {
                "\(what) did not return within \(Int(bound)) s: " + Self.metadataStoreHint
            } else {
                "\(what) did not return within \(Int(bound)) s; libjack is wedged in this process (jack2 issue "
                    + "#395) and no JACK client can be opened or closed in it any more: restart the program"
                    + (what.hasPrefix("opening") ? "; or else " + Self.metadataStoreHint : "")
            }
            wedge.withLock {
                guard $0 == nil else { return }
                $0 = reason
                wedgeLock.withLock { $0 = stuck.lock }
            }
        }
        guard let value = result.withLock({ $0 }) else { throw .libraryWedged(reason: wedgedReason ?? what) }
        return value
    }

    /// Waits for `done` at most `bound` seconds; nil when it came. Looked at
    /// every quarter of a second meanwhile: a lane thread asleep on a lock
    /// of the metadata store whose owner thread no longer exists (a program
    /// killed inside the store) will never return, and is given up on once
    /// seen so for `MetadataStore.lockGrace`, not after the whole bound.
    private func wait(for done: DispatchSemaphore, within bound: Double,
                      laneThread: borrowing Atomic<Int32>) -> (seconds: Double, lock: MetadataStore.OwnLockWait?)? {
        let start = cjack_monotonic_nanoseconds()
        func elapsed() -> Double { Double(cjack_monotonic_nanoseconds() - start) / 1e9 }
        var deadLockSince: Double?
        while done.wait(timeout: .now() + min(0.25, max(0, bound - elapsed()))) == .timedOut {
            let tid = laneThread.load(ordering: .acquiring)
            let lock = tid == 0 ? nil : MetadataStore.lockSleptOn(byThread: tid)
            if elapsed() >= bound { return (bound, lock) }
            if let lock, lock.ownerIsGone {
                let since = deadLockSince ?? elapsed()
                deadLockSince = since
                if elapsed() - since >= MetadataStore.lockGrace { return (elapsed(), lock) }
            } else {
                deadLockSince = nil
            }
        }
        return nil
    }

    /// The other cause of an open that never returns: libjack opens jackd's
    /// metadata store (Berkeley DB) in every process, and a program killed
    /// while inside it leaves its lock held for good.
    static var metadataStoreHint: String {
        let store = "/dev/shm/jack_db-\(getuid())"
        return "jackd's metadata store '\(store)' is probably locked by a program killed inside it (libjack opens it "
            + "in every program, and every JACK program of this user then hangs when it starts): stop the JACK servers "
            + "of this user (a clean stop removes the store; kill one that does not stop), or remove '\(store)' while "
            + "none runs"
    }

    /// Whether this process has closed a client (the first step of jack2 #395).
    private let closed = Atomic<Bool>(false)

    func noteClose() { closed.store(true, ordering: .relaxed) }

    /// Calls the library wedged (a close found a notification thread that never went quiet).
    func declareWedged(_ reason: String) {
        wedge.withLock { if $0 == nil { $0 = reason } }
    }

    // MARK: A client's life

    /// Why this process can reach no server again because its server
    /// registry was replaced (`RegistryAttachment`), nil while it was not:
    /// the lane is wedged then, with this as its reason, and only a new
    /// process gets out of it.
    public var registryReplacedReason: String? { registryReplaced.withLock { $0 } }
    private let registryReplaced = Mutex<String?>(nil)

    /// Looks whether the server registry this process attached is still the
    /// file on disk; once it is not, the lane is wedged for good with the
    /// reason, which this returns (nil: not replaced). Cheap: one read of
    /// `/proc/self/maps` and one `stat`.
    @discardableResult
    public func lookAtRegistry() -> String? {
        if let known = registryReplacedReason { return known }
        guard let reason = RegistryAttachment.replacement() else { return nil }
        registryReplaced.withLock { if $0 == nil { $0 = reason } }
        declareWedged(reason)
        return registryReplacedReason
    }

    /// Opens a JACK client's handle on the lane (see `Client(name:serverName:)`).
    /// Not when the server registry was replaced, which every open would fail
    /// on (status 0x21): that is looked at before the open and after a failed one.
    func open(name: String, server: String) throws(JackError) -> Client.OpenResult {
        if let replaced = lookAtRegistry() { throw .libraryWedged(reason: replaced) }
        StepTrace.note("open '\(name)' on '\(server)': waiting for the lane")
        let opened = try openOnLane(name: name, server: server)
        if opened.handle == nil, let replaced = lookAtRegistry() { throw .libraryWedged(reason: replaced) }
        return opened
    }

    private func openOnLane(name: String, server: String) throws(JackError) -> Client.OpenResult {
        try perform("opening JACK client '\(name)' on server '\(server)'", within: Self.openBound) { [self] in
            retireClientsBeforeOpen()
            StepTrace.note("open '\(name)' on '\(server)': calling jack_client_open")
            noteOpenCalled()
            let opened = ClientNameLock.holding(name) { Client.openHandle(name: name, server: server) }
            StepTrace.note("open '\(name)' on '\(server)': jack_client_open gave \(opened.handle == nil ? "no client" : "a client"), status 0x\(String(opened.status, radix: 16))")
            if opened.handle != nil { noteOpened() }
            return opened
        }
    }

    package func opened(_ client: ClientTeardown) {
        clients.withLock { $0[ObjectIdentifier(client)] = client }
    }

    private func forget(_ client: ClientTeardown) {
        clients.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(client)) }
    }

    package func close(_ client: ClientTeardown) -> ClientCloseOutcome {
        defer { forget(client) }
        guard client.waitForCallsInFlight(within: Self.quietBound) else { return wedgedByCallInFlight(client) }
        do {
            return try perform("closing \(client.label)", within: Self.closeBound) { [self] in closeSteps(client) }
        } catch {
            return .wedged(reason: error.description)
        }
    }

    package func deactivate(_ client: ClientTeardown,
                            _ body: @escaping @Sendable () -> Result<Int32, JackError>) throws(JackError) -> Result<Int32, JackError> {
        try perform("deactivating JACK client '\(client.name)'", within: Self.closeBound, excludingMetadata: false, body)
    }

    package func metadataCall<T>(_ what: String, _ body: @escaping @Sendable () -> T?) -> T? {
        MetadataCalls.run(what, body)
    }

    package func serverWentAway() { noteShutdown() }

    /// On the lane: deactivates, waits for the notification thread to be
    /// quiet, closes. A thread that never goes quiet wedges the library: the
    /// client is then left open for ever (closing it would hang).
    private func closeSteps(_ client: ClientTeardown) -> ClientCloseOutcome {
        StepTrace.note("close \(client.label): deactivating")
        client.deactivateHandle()
        noteClose()
        StepTrace.note("close \(client.label): deactivated, waiting for its notification thread")
        // Closing unlinks the client's notification socket, which names the client, not the server.
        let closed = ClientNameLock.holding(client.name) { () -> Bool in
            // Looked at last, right before libjack cancels the thread: a
            // notification that came while the name lock was taken is
            // handled first (the soak's harness probe, closed while three
            // tools came back, wedged so within a few rounds). Nothing
            // else runs between that look and the close.
            StepTrace.note("close \(client.label): name locked, closing once its notification thread is quiet")
            if client.notificationThreadID > 0,
               !NotificationThread(tid: client.notificationThreadID)
                   .waitUntilQuiet(untilGone: client.serverWentAway, within: Self.quietBound) {
                return false
            }
            client.closeHandle()
            return true
        }
        guard closed else {
            let reason = "the notification thread of \(client.label) was still handling a server notification after "
                + "\(Int(Self.quietBound)) s, so it cannot be closed without hanging libjack (jack2 issue "
                + "#395); no JACK client can be opened in this process any more: restart the program"
            declareWedged(reason)
            return .wedged(reason: reason)
        }
        StepTrace.note("close \(client.label): closed")
        return .closed
    }

    /// On the lane, before an open that libjack would start by closing every
    /// client (a server went away since the last open): closes `client` the
    /// careful way, and tells its handler of the loss if it has not heard of it.
    private func closeOnLane(_ client: ClientTeardown) {
        guard client.beginClose() else { return }
        forget(client)
        if client.waitForCallsInFlight(within: Self.quietBound) {
            _ = closeSteps(client)
        } else {
            _ = wedgedByCallInFlight(client)
        }
        client.deliverPendingShutdown()
    }

    /// A call on `client` that never returned: closing now would free what it uses.
    private func wedgedByCallInFlight(_ client: ClientTeardown) -> ClientCloseOutcome {
        let reason = "a libjack call on JACK client '\(client.name)' on server '\(client.serverName)' did not return "
            + "within \(Int(Self.quietBound)) s, so the client cannot be closed; no JACK client can be opened in "
            + "this process any more: restart the program"
        declareWedged(reason)
        return .wedged(reason: reason)
    }

    /// After the server `serverName` stopped: waits (at most `seconds`) until
    /// this process's clients of it have heard (their shutdown callback ran),
    /// then closes them on the lane. A shutdown heard late would otherwise
    /// mark the next open as one that closes every client of the process.
    public func retireClients(ofStoppedServer serverName: String, within seconds: Double = 2) {
        let deadline = cjack_monotonic_nanoseconds() + UInt64(seconds * 1e9)
        let lost = clients.withLock { Array($0.values) }.filter { !$0.isClosed && $0.serverName == serverName }
        guard !lost.isEmpty else { return }
        while !lost.allSatisfy(\.serverWentAway) && cjack_monotonic_nanoseconds() < deadline { usleep(1000) }
        _ = try? perform("closing the clients of stopped server '\(serverName)'", within: Self.closeBound) { [self] in
            for client in lost where client.serverWentAway { closeOnLane(client) }
        }
    }

    /// Set when any client's shutdown callback runs, cleared by a successful
    /// open: libjack's own flag for "a server went away" (`fServerRunning`)
    /// follows the same two events.
    private let shutdownSinceLastOpen = Atomic<Bool>(false)

    /// A client's server went away.
    func noteShutdown() { shutdownSinceLastOpen.store(true, ordering: .sequentiallyConsistent) }

    /// A client opened: libjack considers its server running again.
    func noteOpened() { shutdownSinceLastOpen.store(false, ordering: .sequentiallyConsistent) }

    /// On the lane, before an open. Once a client's server went away, libjack's
    /// next open closes and frees every client of the process, whatever server
    /// it is on, without waiting for their notification threads (and a client
    /// that its owner still uses is then freed under it). The lane closes them
    /// first, the careful way, and each one's handler hears of the loss.
    private func retireClientsBeforeOpen() {
        guard shutdownSinceLastOpen.load(ordering: .sequentiallyConsistent) else { return }
        let open = clients.withLock { Array($0.values) }.filter { !$0.isClosed }
        for client in open { closeOnLane(client) }
    }
}
