import Foundation
import JackKit

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
    public let sampleRate: Double
    /// Period before the loss and now, frames (now: after the session's own request).
    public let previousIOBufferFrames: Int
    public let ioBufferFrames: Int
    /// Whether the session is active again (automatic policy and it was active).
    public let reactivated: Bool
    /// Seconds from the loss to the reset.
    public let downtime: Double
}

extension AudioSession {
    /// Reacts to the server going away or dropping this client: posts
    /// `mediaServicesWereLost`, marks the session inactive, lets go of the dead
    /// client without waiting for it, and starts reconnecting.
    func mediaServicesLost(reason: String) {
        transition.lock()
        let lostAt = Date()
        let (client, wasActive) = activation.withLock { state -> (Client?, Bool) in
            let client = state.client
            let wasActive = state.isActive
            state.client = nil
            state.ports = nil
            state.processor = nil
            state.isActive = false
            state.plan = .none
            return (client, wasActive)
        }
        // The dead client's shared memory may be gone: use what was last seen.
        let before = (Double(lastSampleRate.load(ordering: .relaxed)), lastPeriod.load(ordering: .relaxed))
        transition.unlock()
        guard let client else { return }
        hub.post(.mediaServicesWereLost(reason: reason))
        let generation = reconnectGeneration.add(1, ordering: .relaxed).newValue
        Thread.detachNewThread { [weak self] in
            // JackKit closes the dead client once libjack's notification
            // thread for it has exited (jack2 #395), within a bound; the
            // reconnect's first open waits for that close on the same lane.
            if case let .wedged(why) = client.close() {
                self?.reportLibraryWedged(why)
                return
            }
            self?.reconnect(generation: generation, wasActive: wasActive, lostAt: lostAt, before: before)
        }
    }

    /// Why libjack is stuck in this process (nil: it is not). Once it is, no
    /// session in the process can reach a server again: restart the program.
    public var libraryWedgedReason: String? { ClientLifecycle.shared.wedgedReason }

    /// Says once that libjack is wedged: a second `mediaServicesWereLost`
    /// whose reason starts with "libjack is wedged", and no more reconnecting.
    func reportLibraryWedged(_ why: String) {
        guard !wedgeReported.exchange(true, ordering: .relaxed) else { return }
        reconnectGeneration.add(1, ordering: .relaxed)
        hub.post(.mediaServicesWereLost(reason: "libjack is wedged: " + why))
    }

    /// Retries opening a client on the same server with backoff (50 ms
    /// doubling to 1 s, woken early when the server's socket appears), never
    /// starting a server, until it succeeds, the session closes, or the limit passes.
    private func reconnect(generation: Int, wasActive: Bool, lostAt: Date, before: (Double, Int)) {
        let watch = ServerWatch(serverName: serverName)
        var delay = 0.05
        while reconnectGeneration.load(ordering: .relaxed) == generation {
            if let limit = reconnectLimit, Date().timeIntervalSince(lostAt) > limit { return }
            if let reset = tryReset(wasActive: wasActive, lostAt: lostAt, before: before) {
                hub.post(.mediaServicesWereReset(reset))
                return
            }
            if watch.wait(seconds: delay) {
                // The socket is there; the server may need a moment to accept clients.
                delay = 0.01
            } else {
                delay = min(delay * 2, 1)
            }
        }
    }

    private func tryReset(wasActive: Bool, lostAt: Date, before: (Double, Int)) -> MediaServicesReset? {
        guard openClient == nil else { return nil }
        // Opened outside the session lock: an open can block in libjack, and
        // the arbitration timer and the app's calls need the lock meanwhile.
        let fresh: Client
        do {
            fresh = try makeClient()
        } catch {
            if let why = libraryWedgedReason { reportLibraryWedged(why) }
            return nil
        }
        transition.lock()
        defer { transition.unlock() }
        guard openClient == nil else {
            Thread.detachNewThread { fresh.close() }
            return nil
        }
        install(fresh)
        let client = fresh
        // A new client has a new UUID: publish afresh (activation does it too).
        forgetPublishedState()
        let reactivate = wasActive && resetPolicy == .automatic
        if reactivate {
            do {
                try activateLocked(postFirstCategoryChange: false, tolerateMissingPorts: true)
            } catch {
                // The server went again mid-rebuild: start over on the next attempt.
                activation.withLock { $0 = Activation(history: $0.history, hasBeenActive: $0.hasBeenActive) }
                Thread.detachNewThread { client.close() }
                return nil
            }
        }
        if !reactivate {
            publishState(on: client)
            startArbitrationTimer()
        }
        return MediaServicesReset(previousSampleRate: before.0, sampleRate: Double(client.sampleRate),
                                  previousIOBufferFrames: before.1, ioBufferFrames: client.bufferSize,
                                  reactivated: reactivate, downtime: Date().timeIntervalSince(lostAt))
    }
}
