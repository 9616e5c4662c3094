import CWakeup
import Glibc
import JackKit
import Synchronization

/// How a thread waits for something that shows at a cycle boundary (a
/// connection the running graph holds, the period the server runs, a latency
/// pass) without looking every millisecond: while at least one thread waits,
/// the process callback posts a semaphore at the end of each cycle, and the
/// waiter looks again then. Nobody waiting, a cycle pays one relaxed load.
/// A post allocates nothing and takes no lock (as `ReaderWakeup`'s). Any
/// other loop that waiters watch (the recorder's disk thread) rings it the
/// same way at the end of each pass.
/// Sendable: its state is a POSIX semaphore and an atomic, both made for
/// use from many threads.
public struct CycleBell: ~Copyable, @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>
    /// Threads inside `wait`.
    private let waiters = Atomic<Int>(0)

    /// A bell nobody waits on yet.
    public init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// On the real-time thread, at the end of a cycle: wakes the waiters, if any.
    @inline(__always)
    public func cycleEnded() {
        if waiters.load(ordering: .relaxed) > 0 { sem_post(semaphore) }
    }

    /// From any thread: the waiters look again now (something they wait on
    /// changed between cycles).
    public func ring() {
        if waiters.load(ordering: .acquiring) > 0 { sem_post(semaphore) }
    }

    /// Waits until `condition` holds, looking at the start, after each ring
    /// and at the end of each cycle, at most `seconds` on the monotonic
    /// clock. Whether it held.
    @discardableResult
    public func wait(seconds: Double, until condition: () -> Bool) -> Bool {
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer {
            waiters.subtract(1, ordering: .sequentiallyConsistent)
            while sem_trywait(semaphore) == 0 {}
        }
        let deadline = Int64(MonotonicClock.nanoseconds) + Int64(seconds * 1e9)
        while !condition() {
            let remaining = deadline - Int64(MonotonicClock.nanoseconds)
            guard remaining > 0, cwakeup_wait(semaphore, remaining) == 0 else { return condition() }
        }
        return true
    }
}
