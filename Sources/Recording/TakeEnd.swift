import Dispatch
import Synchronization

/// The moment a take ends (its limit reached, a write failed, or ended by a
/// command), told once to every waiter: threads that block on it and tasks
/// that await it. Reached more than once, it stays reached.
final class TakeEnd: Sendable {
    private struct Waiting {
        var reached = false
        var tasks: [CheckedContinuation<Void, Never>] = []
    }

    private let waiting = Mutex(Waiting())
    /// Holds one permit per blocked thread woken, handed on by each (see `wait`).
    private let threads = DispatchSemaphore(value: 0)

    /// The take has ended: every waiter goes on, now and later.
    func reach() {
        let woken = waiting.withLock { state -> [CheckedContinuation<Void, Never>]? in
            guard !state.reached else { return nil }
            state.reached = true
            defer { state.tasks = [] }
            return state.tasks
        }
        guard let woken else { return }
        threads.signal()
        for task in woken { task.resume() }
    }

    /// Whether the take has ended.
    var isReached: Bool { waiting.withLock { $0.reached } }

    /// Blocks until the take ends, or `timeout` seconds pass (nil: no limit);
    /// whether it ended.
    func wait(timeout: Double? = nil) -> Bool {
        if isReached { return true }
        let woke = timeout.map { threads.wait(timeout: .now() + $0) == .success } ?? { threads.wait(); return true }()
        // The one permit passes from each woken thread to the next.
        if woke { threads.signal() }
        return woke
    }

    /// Suspends until the take ends.
    func reached() async {
        await withCheckedContinuation { task in
            let now = waiting.withLock { state -> Bool in
                if !state.reached { state.tasks.append(task) }
                return state.reached
            }
            if now { task.resume() }
        }
    }
}
