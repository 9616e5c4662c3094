import CJack
import Glibc
import Dispatch
import Synchronization

/// Every `jack_client_open` and `jack_client_close` of the process, one at a
/// time on one lane, each within a bound.
///
/// libjack is process-global: opens and closes share one mutex, and a close
/// that libjack cannot finish (jack2 #395: a notification thread cancelled
/// while it held another mutex) blocks every later open for ever. So JackKit
/// serialises them itself, closes a client only once its notification thread
/// is quiet (`NotificationThread`), and once any client's server went away,
/// closes every client before the next open (libjack's open would close and
/// free them all itself, without that care); when a call still does not
/// return within its bound, it calls
/// the library wedged: every later open and close fails at once with
/// `JackError.libraryWedged` instead of hanging. The process must then be
/// restarted; `wedgedReason` says why.
public final class ClientLifecycle: Sendable {
    /// The one lane of this process.
    public static let shared = ClientLifecycle()

    /// How long an open may take before the library is called wedged, seconds.
    public static let openBound = 15.0
    /// How long a close may take, the wait for its notification thread included, seconds.
    public static let closeBound = 10.0
    /// How long a close waits for the client's notification thread to exit or go quiet, seconds.
    public static let quietBound = 4.0

    private let queue = DispatchQueue(label: "jackkit.client-lifecycle")
    private let onLane = DispatchSpecificKey<Bool>()
    private let wedge = Mutex<String?>(nil)
    private let clients = Mutex<[ObjectIdentifier: WeakClient]>([:])

    private struct WeakClient: @unchecked Sendable { // a weak reference, read and written only inside the `clients` mutex
        weak var client: Client?
    }

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
        queue.async { [self] in
            // The body runs outside the lock: a caller that timed out reads
            // `result` at once, and must not wait for a body stuck in libjack.
            if wedgedReason == nil {
                let value = withoutBrokenPipeSignal(guarded)
                result.withLock { $0 = value }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + bound) == .timedOut {
            // jack2 #395 needs a close before; an open that hangs without one
            // is stuck in the metadata store, which a restart does not cure.
            let reason = what.hasPrefix("opening") && !closed.load(ordering: .relaxed)
                ? "\(what) did not return within \(Int(bound)) s: " + Self.metadataStoreHint
                : "\(what) did not return within \(Int(bound)) s; libjack is wedged in this process (jack2 issue "
                    + "#395) and no JACK client can be opened or closed in it any more: restart the program"
                    + (what.hasPrefix("opening") ? "; or else " + Self.metadataStoreHint : "")
            wedge.withLock { if $0 == nil { $0 = reason } }
        }
        guard let value = result.withLock({ $0 }) else { throw .libraryWedged(reason: wedgedReason ?? what) }
        return value
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

    func register(_ client: Client) {
        clients.withLock { $0[ObjectIdentifier(client)] = WeakClient(client: client) }
    }

    func unregister(_ client: Client) {
        clients.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(client)) }
    }

    /// After the server `serverName` stopped: waits (at most `seconds`) until
    /// this process's clients of it have heard (their shutdown callback ran),
    /// then closes them on the lane. A shutdown heard late would otherwise
    /// mark the next open as one that closes every client of the process.
    public func retireClients(ofStoppedServer serverName: String, within seconds: Double = 2) {
        let deadline = cjack_monotonic_nanoseconds() + UInt64(seconds * 1e9)
        let lost = clients.withLock { $0.values.compactMap(\.client) }.filter { !$0.isClosed && $0.serverName == serverName }
        guard !lost.isEmpty else { return }
        while !lost.allSatisfy(\.serverWentAway) && cjack_monotonic_nanoseconds() < deadline { usleep(1000) }
        _ = try? perform("closing the clients of stopped server '\(serverName)'", within: Self.closeBound) {
            for client in lost where client.serverWentAway { client.closeOnLane() }
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
    /// that its owner still uses is then freed under it). JackKit closes them
    /// first, the careful way, and each one's handler hears of the loss.
    func retireClientsBeforeOpen() {
        guard shutdownSinceLastOpen.load(ordering: .sequentiallyConsistent) else { return }
        let open = clients.withLock { $0.values.compactMap(\.client) }.filter { !$0.isClosed }
        for client in open { client.closeOnLane() }
    }
}
