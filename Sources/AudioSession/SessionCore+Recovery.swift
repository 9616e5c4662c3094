import Foundation
import JackKit

/// The server's loss and return: a media-services reset.
extension SessionCore {
    /// What a loss left behind for the reset to compare with.
    struct Loss: Sendable {
        /// The reconnect generation the loss started; a close or a later loss ends it.
        let generation: Int
        let wasActive: Bool
        let lostAt: Date
        /// Sample rate (Hz) and period (frames) when last seen.
        let sampleRate: Double
        let period: Int
    }

    /// The server went away or dropped the client `sender`: posts
    /// `mediaServicesWereLost`, marks the session inactive, lets go of the
    /// dead client without waiting for it, and starts reconnecting.
    func mediaServicesLost(reason: String, from sender: ObjectIdentifier) {
        guard isCurrent(sender), let client = activation.client else { return }
        let wasActive = activation.isActive
        activation.client = nil
        activation.ports = nil
        activation.processor = nil
        activation.isActive = false
        activation.plan = .none
        hub.post(.mediaServicesWereLost(reason: reason))
        // The dead client's shared memory may be gone: use what was last seen.
        let loss = Loss(generation: board.reconnectGeneration.add(1, ordering: .relaxed).newValue, wasActive: wasActive,
                        lostAt: Date(), sampleRate: Double(board.lastSampleRate.load(ordering: .relaxed)),
                        period: board.lastPeriod.load(ordering: .relaxed))
        pendingLoss = loss
        if let session {
            session.reconnect(after: client, loss)
        } else {
            Thread.detachNewThread { client.close() }
        }
    }

    /// Makes `fresh`, just opened on the returned server, the session's
    /// client, reactivates under the automatic policy when the session was
    /// active, and posts `mediaServicesWereReset`. False (the caller closes
    /// `fresh`) when the reconnect is stale (the session closed or was lost
    /// again since), a client is already there, or the server went again.
    func adopt(_ fresh: Client, after loss: Loss) -> Bool {
        guard openClient == nil, board.reconnectGeneration.load(ordering: .relaxed) == loss.generation else { return false }
        pendingLoss = nil
        install(fresh)
        // A new client has a new UUID: publish afresh (activation does it too).
        forgetPublishedState()
        let reactivate = loss.wasActive && board.resetSettings.withLock { $0.policy } == .automatic
        if reactivate {
            do {
                try activate(postFirstCategoryChange: false, tolerateMissingPorts: true)
            } catch {
                // The server went again mid-rebuild: start over on the next attempt.
                activation = Activation(history: activation.history, hasBeenActive: activation.hasBeenActive)
                return false
            }
        } else {
            lookAtDevices(on: fresh)
            activation.plan = idlePlan()
            publishState(on: fresh)
            startArbitrationTimer()
        }
        hub.post(.mediaServicesWereReset(MediaServicesReset(
            previousSampleRate: loss.sampleRate, sampleRate: Double(fresh.sampleRate), previousIOBufferFrames: loss.period,
            ioBufferFrames: fresh.bufferSize, reactivated: reactivate, downtime: Date().timeIntervalSince(loss.lostAt))))
        return true
    }

    /// The app activated (or opened) the session on its own while the
    /// reconnect thread was still trying, and reached the returned server
    /// first: the reset is said here (it was one), and the reconnect thread stops.
    func resetByApp(after loss: Loss, on client: Client, reactivated: Bool) {
        pendingLoss = nil
        board.reconnectGeneration.add(1, ordering: .relaxed)
        hub.post(.mediaServicesWereReset(MediaServicesReset(
            previousSampleRate: loss.sampleRate, sampleRate: Double(client.sampleRate), previousIOBufferFrames: loss.period,
            ioBufferFrames: client.bufferSize, reactivated: reactivated, downtime: Date().timeIntervalSince(loss.lostAt))))
    }
}
