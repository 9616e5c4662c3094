import Foundation
import JackKit
import JackRuntime

/// What to do when the JACK server comes back after a loss.
public enum ResetPolicy: Sendable {
    /// Rebuild and reactivate at once (the default for headless tools).
    case automatic
    /// Rebuild the client, but leave activation to the app, as on iOS.
    case manual
}

/// What a media-services reset found: the new server may run another rate or period.
public struct MediaServicesReset: Sendable, Equatable {
    /// Sample rate before the loss and now, Hz.
    public let previousSampleRate: Double
    /// Sample rate now, Hz.
    public let sampleRate: Double
    /// Period before the loss and now, frames (now: after the session's own request).
    public let previousIOBufferFrames: Int
    /// Period now, frames.
    public let ioBufferFrames: Int
    /// Whether the session is active again (automatic policy and it was active).
    public let reactivated: Bool
    /// Seconds from the loss to the reset.
    public let downtime: Double
}

extension AudioSession {
    /// Why libjack is stuck in this process (nil: it is not). Once it is, no
    /// session in the process can reach a server again: restart the program.
    public var libraryWedgedReason: String? { ClientLifecycle.shared.wedgedReason }

    /// Whether the process is stuck because JACK's server registry
    /// (`/dev/shm/jack-shm-registry`) was removed or replaced since libjack
    /// attached it: removed while no jackd ran (`rm /dev/shm/jack*`,
    /// systemd-logind's `RemoveIPC=yes`), then made anew by the next jackd.
    /// libjack attaches the registry once per process, so every later open
    /// fails; the session says it once (`mediaServicesWereLost`, its reason
    /// naming the registry) and stops reconnecting. The cure is a new
    /// process: re-execute the program with its arguments (as `jas` does) or
    /// exit and let a supervisor start it again.
    public var serverRegistryWasReplaced: Bool { ClientLifecycle.shared.registryReplacedReason != nil }

    /// Says once that libjack is wedged: a second `mediaServicesWereLost`
    /// whose reason starts with "libjack is wedged", and no more reconnecting.
    func reportLibraryWedged(_ why: String) {
        core.sync { $0.libraryWedged(why) }
    }

    /// Waits until a JACK client can be opened on `serverName`, never
    /// starting a server, at the reconnect's pace (50 ms doubling to 1 s,
    /// woken early when the server's socket appears); each attempt opens and
    /// closes a client named `probeName`. False once `limit` seconds passed.
    @discardableResult
    public static func waitForServer(_ serverName: String, probeName: String = "jackaudiosession-probe",
                                     limit: Double? = nil) -> Bool {
        let watch = ServerWatch(serverName: serverName)
        var backoff = ReconnectBackoff()
        let started = ContinuousClock.now
        while (try? Client.checkedOpen(name: probeName, serverName: serverName))?.close() == nil {
            if let limit, (ContinuousClock.now - started).inSeconds >= limit { return false }
            backoff.pause(on: watch, serverName: serverName)
        }
        return true
    }

    /// On a thread of its own: lets go of the dead client, then retries
    /// opening a client on the same server with backoff (50 ms doubling to
    /// 1 s, woken early when the server's socket appears), never starting a
    /// server, until one is adopted, the session closes or goes away, or the
    /// limit passes. It holds the session only during an attempt, so a
    /// session released without `close()` stops reconnecting.
    func reconnect(after dead: Client, _ loss: SessionMachine.Loss) {
        let serverName = serverName
        // What was seen of the server when the dead client opened.
        let presence = board.serverPresence.withLock { $0 }
        Thread.detachNewThread { [weak self] in
            StepTrace.note("reconnect: closing the dead client")
            // The lane closes the dead client once libjack's notification
            // thread for it has exited (jack2 #395), within a bound; the
            // reconnect's first open waits for that close on the same lane.
            if case let .wedged(why) = dead.close() {
                self?.reportLibraryWedged(why)
                return
            }
            StepTrace.note("reconnect: dead client closed")
            let watch = ServerWatch(serverName: serverName)
            self?.board.reconnectWatch.withLock { $0 = watch }
            // A generation that moved on before the watch was in place is seen by the first attempt.
            var backoff = ReconnectBackoff()
            var course = ReconnectCourse(generation: loss.generation)
            func attempt() -> Bool {
                let session = self
                session?.board.reconnectAttempts.add(1, ordering: .releasing)
                let step = course.next(
                    generation: session?.board.reconnectGeneration.load(ordering: .relaxed),
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
                    session.reportLibraryWedged(reason)
                    return true
                case let .pause(damage):
                    say(damage)
                    StepTrace.note("reconnect: the store is damaged, or no request socket or no jackd serving "
                                   + "'\(serverName)' yet; not opening")
                    return false
                case .open:
                    return session.tryReset(loss, openFailed: { say(course.openFailed($0)) })
                }
            }
            while !attempt() {
                StepTrace.note("reconnect: attempt failed, pausing")
                if backoff.pause(on: watch, serverName: serverName) == .interrupted {
                    StepTrace.note("reconnect: pause interrupted (the generation moved on)")
                }
            }
            if let board = self?.board {
                board.reconnectWatch.withLock { if $0 === watch { $0 = nil } }
                board.reconnectsEnded.add(1, ordering: .releasing)
            }
            StepTrace.note("reconnect: done")
        }
    }

    /// Opens a client off the queue (an open can block in libjack, and the
    /// timers and the app's calls need the queue meanwhile), then hands it to
    /// the core. Whether the session was reset.
    private func tryReset(_ loss: SessionMachine.Loss, openFailed: (JackError?) -> Void) -> Bool {
        guard board.read({ $0.machine.awaitsReconnect(for: loss) }) else { return false }
        let fresh: Client
        do {
            fresh = try makeClient()
        } catch {
            if let why = libraryWedgedReason { reportLibraryWedged(why) }
            openFailed(error.cause)
            return false
        }
        StepTrace.note("reconnect: client opened, adopting")
        switch core.sync({ $0.adopt(fresh, after: loss) }) {
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
            return (try? complete(wait)) != nil
        }
    }
}
