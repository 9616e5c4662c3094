import Foundation
import JackKit
import JackRuntime

/// The thread that brings a session back after its server was lost: it
/// lets go of the dead client, then, at each step `ReconnectCourse` decides,
/// pauses (50 ms doubling to 1 s, woken early when the server's socket
/// appears, `ReconnectBackoff`) or opens a client and hands it to the
/// session's core, never starting a server. It ends when a client is
/// adopted, the loss is over (the session closed, was lost again, libjack
/// wedged) or the session's reconnect limit passed. It holds the session
/// only during an attempt, so a session released without `close()` stops
/// reconnecting.
struct ReconnectLoop {
    private weak var session: AudioSession?
    private let board: SessionBoard
    private let serverName: String
    private let loss: SessionMachine.Loss
    /// What was seen of the server when the dead client opened.
    private let presence: ServerPresence

    /// Starts the loop on a thread of its own, for `loss`, which let go of `dead`.
    static func start(for session: AudioSession, after dead: Client, _ loss: SessionMachine.Loss) {
        let loop = ReconnectLoop(session: session, board: session.board, serverName: session.serverName, loss: loss,
                                 presence: session.board.serverPresence.withLock { $0 })
        Thread.detachNewThread { loop.run(closing: dead) }
    }

    private func run(closing dead: Client) {
        StepTrace.note("reconnect: closing the dead client")
        // The lane closes the dead client once libjack's notification
        // thread for it has exited (jack2 #395), within a bound; the
        // reconnect's first open waits for that close on the same lane.
        if case let .wedged(why) = dead.close() {
            session?.core.sync { $0.libraryWedged(why) }
            return
        }
        StepTrace.note("reconnect: dead client closed")
        let watch = ServerWatch(serverName: serverName)
        board.reconnectWatch.withLock { $0 = watch }
        // A generation that moved on before the watch was in place is seen by the first attempt.
        var backoff = ReconnectBackoff()
        var course = ReconnectCourse(generation: loss.generation)
        while !attempt(&course) {
            StepTrace.note("reconnect: attempt failed, pausing")
            if backoff.pause(on: watch, serverName: serverName) == .interrupted {
                StepTrace.note("reconnect: pause interrupted (the generation moved on)")
            }
        }
        board.reconnectWatch.withLock { if $0 === watch { $0 = nil } }
        board.reconnectsEnded.add(1, ordering: .releasing)
        StepTrace.note("reconnect: done")
    }

    /// One step of the course; whether the loop is over.
    private func attempt(_ course: inout ReconnectCourse) -> Bool {
        let session = session
        board.reconnectAttempts.add(1, ordering: .releasing)
        let serverName = serverName, presence = presence
        let step = course.next(
            generation: session == nil ? nil : board.reconnectGeneration.load(ordering: .relaxed),
            sinceLoss: ContinuousClock.now - loss.lostAt, limit: session?.reconnectLimit,
            registryReplaced: { ClientLifecycle.shared.lookAtRegistry() },
            storeDamage: { LibraryVersion.isPipeWire ? nil : MetadataStore().problem(forServer: serverName)?.jackError },
            serverAway: { presence.isAway(serverName: serverName) })
        guard let session else { return true }
        func say(_ damage: JackError?) {
            if let damage { session.hub.post(.mediaServicesWereLost(reason: damage.description)) }
        }
        switch step {
        case .stop:
            return true
        case let .wedged(reason):
            session.core.sync { $0.libraryWedged(reason) }
            return true
        case let .pause(damage):
            say(damage)
            StepTrace.note("reconnect: the store is damaged, or no request socket or no jackd serving "
                           + "'\(serverName)' yet; not opening")
            return false
        case .open:
            return reset(session, openFailed: { say(course.openFailed($0)) })
        }
    }

    /// Opens a client off the queue (an open can block in libjack, and the
    /// timers and the app's calls need the queue meanwhile), then hands it to
    /// the core. Whether the session was reset.
    private func reset(_ session: AudioSession, openFailed: (JackError?) -> Void) -> Bool {
        guard board.read({ $0.machine.awaitsReconnect(for: loss) }) else { return false }
        let fresh: Client
        do {
            fresh = try session.makeClient()
        } catch {
            if let why = session.libraryWedgedReason { session.core.sync { $0.libraryWedged(why) } }
            openFailed(error.cause)
            return false
        }
        StepTrace.note("reconnect: client opened, adopting")
        switch session.core.sync({ $0.adopt(fresh, after: loss) }) {
        case .refused:
            StepTrace.note("reconnect: refused")
            Thread.detachNewThread { fresh.close() }
            return false
        case .adopted:
            StepTrace.note("reconnect: adopted")
            return true
        case let .reactivating(wait):
            StepTrace.note("reconnect: adopted, reactivating")
            // Overtaken (lost again, closed): the loss or the close has the client now.
            defer { StepTrace.note("reconnect: reactivation complete") }
            return (try? session.complete(wait)) != nil
        }
    }
}
