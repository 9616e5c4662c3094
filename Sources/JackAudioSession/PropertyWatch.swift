import Dispatch
import Synchronization

/// The session's properties as streams of values: what the seeds observe
/// with key-value observing ("You can observe changes to the value of this
/// property using key-value observing"), which Linux does not have.
extension AudioSession {
    /// The values of `property` as they change: first the value now, then
    /// each new value after the session's state changed (an activation, a
    /// route change, a category, a preference, a reset, a period change, ...).
    /// Equal values in a row are given once; a consumer that is slower than
    /// the changes gets the newest. The stream ends when the session goes or
    /// the consumer stops iterating.
    ///
    /// The seeds' `session.observe(\.outputNumberOfChannels) { ... }` is
    /// here `for await channels in session.values(of: \.outputNumberOfChannels) { ... }`.
    public func values<Value: Equatable & Sendable>(of property: KeyPath<AudioSession, Value> & Sendable)
        -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        board.propertyWatch.add(PropertyWatch.Watcher(session: self, property: property, continuation: continuation))
        return stream
    }
}

/// The streams of `AudioSession.values(of:)`: after any change of the
/// session's state each reads its property again, off the session's queue,
/// and gives the value when it differs from the last one given. Changes
/// that come while a check runs are checked once more after it.
final class PropertyWatch: Sendable {
    struct Watcher: Sendable {
        /// Reads the property and gives it when new; false when the stream is over.
        let check: @Sendable () -> Bool

        init<Value: Equatable & Sendable>(session: AudioSession, property: KeyPath<AudioSession, Value> & Sendable,
                                          continuation: AsyncStream<Value>.Continuation) {
            let last = Mutex<Value?>(nil)
            check = { [weak session] in
                guard let session else {
                    continuation.finish()
                    return false
                }
                let value = session[keyPath: property]
                let isNew = last.withLock { last in
                    defer { last = value }
                    return last != value
                }
                if isNew, case .terminated = continuation.yield(value) { return false }
                return true
            }
        }
    }

    private let watchers = Mutex<[Watcher]>([])
    private let checkPending = Atomic<Bool>(false)
    private let queue = DispatchQueue(label: "jackaudiosession.property-values")

    /// Starts a stream with the value now.
    func add(_ watcher: Watcher) {
        queue.async { [self] in
            // Listed before its first reading: a change meanwhile is checked again.
            watchers.withLock { $0.append(watcher) }
            if !watcher.check() { watchers.withLock { _ = $0.popLast() } }
        }
    }

    /// Something the properties read may have changed: check them all soon.
    func stateChanged() {
        guard !watchers.withLock({ $0.isEmpty }),
              !checkPending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            checkPending.store(false, ordering: .releasing)
            let current = watchers.withLock { $0 }
            guard !current.isEmpty else { return }
            let over = current.indices.filter { !current[$0].check() }
            guard !over.isEmpty else { return }
            // Watchers are added and removed on this queue only: the indices still hold.
            watchers.withLock { watchers in
                for index in over.reversed() { watchers.remove(at: index) }
            }
        }
    }
}
