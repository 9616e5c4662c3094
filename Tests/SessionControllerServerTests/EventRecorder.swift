import JackAudioSession
import Foundation
import Synchronization

/// Collects a session's events from its AsyncStream for a test to inspect.
final class EventRecorder: @unchecked Sendable {
    typealias RouteChange = (reason: RouteChangeReason, previous: RouteDescription, current: RouteDescription,
                             streams: [String])
    private final class Received: Sendable {
        let events = Mutex<[AudioSessionEvent]>([])
    }
    private let received = Received()
    private var task: Task<Void, Never>?

    init(_ session: AudioSession) {
        let stream = session.events
        let received = received
        task = Task {
            for await event in stream { received.events.withLock { $0.append(event) } }
        }
    }

    deinit { task?.cancel() }

    var events: [AudioSessionEvent] { received.events.withLock { $0 } }

    /// Route changes received so far, other than the categoryChange of the first activation.
    var laterRouteChanges: [RouteChange] {
        Array(routeChanges.drop { $0.reason == .categoryChange && $0.previous == .empty })
    }

    /// Route changes received so far.
    var routeChanges: [RouteChange] {
        events.compactMap {
            if case let .routeChange(reason, previous, current, streams) = $0 { return (reason, previous, current, streams) }
            return nil
        }
    }

    /// Interruptions received so far.
    var interruptions: [(type: InterruptionType, options: InterruptionOptions, reason: InterruptionReason)] {
        events.compactMap {
            if case let .interruption(type, options, reason) = $0 { return (type, options, reason) }
            return nil
        }
    }
}
