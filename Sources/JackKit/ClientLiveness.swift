import CJack
import Glibc
import Synchronization

/// Whether a client is still open, and how many calls are inside libjack on
/// it right now: shared by the client and every port handle taken from it.
///
/// libjack's port calls (`jack_port_name`, `jack_port_get_connections`, ...)
/// take no client, but read process-wide state that the process's last
/// `jack_client_close` destroys: a route refresh reading a port's
/// connections while the lane closed the client of a dead server hit
/// libjack's `WaitGraphChange` assertion (`manager`) and aborted the test
/// process. So every call on a client or on one of its ports runs while the
/// client is open, and a close waits until none is running.
final class ClientLiveness: Sendable {
    private let closed = Atomic<Bool>(false)
    private let callsInFlight = Atomic<Int>(0)

    /// Whether the client is closed or closing.
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Marks the client closing; true only for the first caller.
    func markClosed() -> Bool { !closed.exchange(true, ordering: .sequentiallyConsistent) }

    /// Runs `body` while the client is open; nil once it is closed.
    func whileOpen<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T? {
        callsInFlight.add(1, ordering: .sequentiallyConsistent)
        defer { callsInFlight.subtract(1, ordering: .sequentiallyConsistent) }
        guard !closed.load(ordering: .sequentiallyConsistent) else { return nil }
        return try body()
    }

    /// After `markClosed`: waits (at most `seconds`) until no call is inside
    /// libjack on the client; false when one still is.
    func waitForCallsInFlight(within seconds: Double) -> Bool {
        let deadline = cjack_monotonic_nanoseconds() + UInt64(seconds * 1e9)
        while callsInFlight.load(ordering: .sequentiallyConsistent) > 0 {
            if cjack_monotonic_nanoseconds() >= deadline { return false }
            usleep(500)
        }
        return true
    }
}
