import CJack

/// One request at a time on a client (see `Client.request`). A plain pthread
/// mutex: requests return values of any type, which `Mutex.withLock` would
/// have to prove safe to send.
final class RequestLock: @unchecked Sendable { // a pthread mutex, allocated once so it never moves
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
