import Dispatch

/// A value that is only ever touched on one serial queue, and checks it:
/// reading `value` anywhere else stops the program (as swift-nio's
/// `NIOLoopBound` does for an event loop), so a comment about which thread
/// may touch what becomes a check that runs.
final class QueueBound<Value>: @unchecked Sendable { // `value` is only handed out on `queue`, checked by dispatchPrecondition
    let queue: DispatchQueue
    private let confined: Value
    private let key = DispatchSpecificKey<ObjectIdentifier>()

    /// Wraps `value`, which belongs to `queue`: made there, and only
    /// touched there. This call must run on `queue` (as NIOLoopBound's must
    /// on its event loop); `make(on:_:)` makes the value there.
    init(_ value: Value, queue: DispatchQueue) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.queue = queue
        confined = value
        queue.setSpecific(key: key, value: ObjectIdentifier(self))
    }

    /// The value `build` makes on `queue`, bound to it (from off the queue: this waits for it).
    static func make(on queue: DispatchQueue, _ build: () -> Value) -> QueueBound {
        dispatchPrecondition(condition: .notOnQueue(queue))
        return queue.sync { QueueBound(build(), queue: queue) }
    }

    /// The value; only on `queue`.
    var value: Value {
        dispatchPrecondition(condition: .onQueue(queue))
        return confined
    }

    /// Whether the caller runs on `queue` now.
    var isOnQueue: Bool { DispatchQueue.getSpecific(key: key) == ObjectIdentifier(self) }

    /// Runs `body` with the value on `queue` and waits for it. Calling it
    /// from `queue` itself is a programming error (it would wait for itself).
    func sync<T>(_ body: (Value) -> T) -> T {
        dispatchPrecondition(condition: .notOnQueue(queue))
        return queue.sync { body(value) }
    }

    /// `sync` for a body that throws an `E`.
    func sync<T, E: Error>(_ body: (Value) throws(E) -> T) throws(E) -> T {
        let result: Result<T, E> = sync { value in
            do throws(E) { return .success(try body(value)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
