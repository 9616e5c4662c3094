import Capture
import Foundation
import JackAudioSession
import Synchronization

/// Hears a measurement session's interruptions, as `jas latency` does: says
/// who interrupted, activates the session again when the interruption ends
/// (retrying while that is refused), and wakes a run waiting for that.
final class InterruptionWatch: @unchecked Sendable { // `task` is set once, in init; the rest is immutable or atomic
    private let session: AudioSession
    private let resumed = DispatchSemaphore(value: 0)
    private let stopped = StopFlag()
    private var task: Task<Void, Never>?

    init(session: AudioSession, onNotice: (@Sendable (AnalyzerNotice) -> Void)?) {
        self.session = session
        let events = session.events, resumed = resumed, stopped = stopped
        task = Task.detached {
            for await event in events {
                guard case let .interruption(type, _, _) = event else { continue }
                if type == .began {
                    onNotice?(.interrupted(by: session.interruptingClient ?? "another session"))
                } else {
                    PortTap.activateAgain(session, stopped: { stopped.isSet }, resumed: { _ in
                        onNotice?(.resumed)
                        resumed.signal()
                    })
                }
            }
        }
    }

    /// Waits until the session is active and no longer interrupted (as long as that takes).
    func waitUntilResumed() {
        while !stopped.isSet && (session.isInterrupted || !session.isActive) {
            _ = resumed.wait(timeout: .now() + 1)
        }
    }

    func stop() {
        stopped.set()
        task?.cancel()
    }
}

/// A flag set once, read from any thread.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}

