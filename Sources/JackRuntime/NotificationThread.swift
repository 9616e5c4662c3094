import CJack

/// The thread libjack (jack2) starts for each client to read the server's
/// notifications, known by its Linux thread id.
///
/// `jack_client_close` cancels it asynchronously; cancelled while it handles
/// another client arriving or leaving, it leaves libjack's synchronisation
/// mutex locked and the close never returns (jack2 #395). It is safe to close
/// once the thread has exited (the server went away and it read the end of its
/// socket) or while it waits in `read()` for the next notification.
struct NotificationThread: Sendable {
    /// The thread's id (`gettid`).
    let tid: Int32

    /// Waits until the thread is quiet: gone, or (unless `untilGone`) waiting
    /// in `read()`. With `untilGone` (the server went away: the thread reads
    /// the end of its socket and exits by itself), waiting in `read()` counts
    /// only at the deadline. Returns false when it is neither by `seconds`.
    func waitUntilQuiet(untilGone: Bool, within seconds: Double) -> Bool {
        let deadline = cjack_monotonic_nanoseconds() + UInt64(seconds * 1e9)
        while true {
            switch cjack_thread_state(tid) {
            case Int32(CJACK_THREAD_GONE): return true
            case Int32(CJACK_THREAD_IN_READ) where !untilGone: return true
            case Int32(CJACK_THREAD_IN_READ) where cjack_monotonic_nanoseconds() >= deadline: return true
            default: break
            }
            if cjack_monotonic_nanoseconds() >= deadline { return false }
            usleep(1000)
        }
    }
}
