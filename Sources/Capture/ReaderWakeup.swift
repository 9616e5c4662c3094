import CWakeup
import Glibc

/// How the real-time thread wakes the one thread that reads its ring,
/// instead of that thread looking every few milliseconds: a POSIX semaphore
/// that the callback posts once at least `everyFrames` frames were written
/// since its last post (a disk writer sleeps through several cycles, a
/// meter wakes every cycle). A post allocates nothing and takes no lock (an
/// atomic add, and a futex wake only while the reader sleeps), as jack2's
/// capture client and jack_capture wake their disk threads.
public final class ReaderWakeup: @unchecked Sendable { // `pendingFrames` belongs to the real-time thread; the semaphore is shared by design
    private let semaphore: UnsafeMutablePointer<sem_t>
    /// Frames written between two posts, at least.
    public let everyFrames: Int
    private var pendingFrames = 0

    public init(everyFrames: Int) {
        self.everyFrames = max(1, everyFrames)
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// On the real-time thread: `frames` more frames are in the ring.
    public func written(_ frames: Int) {
        pendingFrames += frames
        guard pendingFrames >= everyFrames else { return }
        pendingFrames = 0
        sem_post(semaphore)
    }

    /// From any thread: wakes the reader now (to stop it).
    public func wakeNow() {
        sem_post(semaphore)
    }

    /// On the reader's thread: sleeps until woken or `timeout` seconds
    /// passed on the monotonic clock; then takes the posts that came
    /// meanwhile, so the next wait sleeps until the next one. Whether it was woken.
    @discardableResult
    public func wait(timeout: Double) -> Bool {
        let woken = cwakeup_wait(semaphore, Int64(timeout * 1e9)) == 0
        while sem_trywait(semaphore) == 0 {}
        return woken
    }
}
