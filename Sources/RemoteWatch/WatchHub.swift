import Synchronization

/// Hands every line published to each WebSocket connected now. A slow
/// viewer keeps only the newest lines (`backlog`); a publisher never waits.
final class WatchHub: Sendable {
    /// Lines a connection may be behind before the oldest are dropped (25 s of readings at 10 a second).
    static let backlog = 256
    private let subscribers = Mutex<[Int: AsyncStream<String>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    /// A stream of every line published from now on; it ends when the viewer goes or `finish` is called.
    func subscribe() -> AsyncStream<String> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(Self.backlog))
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    func broadcast(_ line: String) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(line) }
    }

    /// Viewers connected now.
    var count: Int { subscribers.withLock { $0.count } }

    func finish() {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
