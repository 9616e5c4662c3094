import Foundation
import JackKit

/// The server's loss and return (a media-services reset): the JACK work
/// around the machine's `serverLost` and `reconnected`.
extension SessionCore {
    /// The server went away or dropped the client `sender`: the session is
    /// inactive, `mediaServicesWereLost` is posted, the dead client is let
    /// go without waiting for it, and reconnecting starts.
    func mediaServicesLost(reason: String, from sender: ObjectIdentifier) {
        guard isCurrent(sender), let client = activation.client else { return }
        // The dead client's shared memory may be gone: use what was last seen.
        let lastSeen = ServerFormat(sampleRate: Double(board.lastSampleRate.load(ordering: .relaxed)),
                                    period: board.lastPeriod.load(ordering: .relaxed))
        guard let effects = machine.serverLost(reason: reason, lastSeen: lastSeen, at: .now) else { return }
        activation.client = nil
        activation.ports = nil
        activation.processor = nil
        activation.plan = .none
        perform(effects, lettingGoOf: client)
    }

    /// Makes `fresh`, just opened on the returned server, the session's
    /// client: reactivated under the automatic policy when the session was
    /// active, and `mediaServicesWereReset` posted. Refused (the caller
    /// closes `fresh`) when the machine refuses it (the session closed or was
    /// lost again since, or the app reached the server first) or the server
    /// went again during the reactivation.
    func adopt(_ fresh: Client, after loss: SessionMachine.Loss) -> Adoption {
        let automatic = board.resetSettings.withLock { $0.policy } == .automatic
        switch machine.reconnected(for: loss, server: Self.format(of: fresh), automatic: automatic, at: .now) {
        case .refuse:
            return .refused
        case let .reactivate(attempt):
            install(fresh)
            // A new client has a new UUID: publish afresh (activation does it too).
            forgetPublishedState()
            do {
                return .reactivating(try begin(attempt))
            } catch {
                // The server went again mid-rebuild: the machine waits for it again; start over on the next attempt.
                activation = Activation(history: activation.history)
                return .refused
            }
        case let .install(effects):
            install(fresh)
            forgetPublishedState()
            lookAtDevices(on: fresh)
            activation.plan = idlePlan()
            publishState(on: fresh)
            perform(effects)
            return .adopted
        }
    }

    /// What became of a client the reconnect opened.
    enum Adoption {
        /// Not taken (the caller closes it).
        case refused
        /// The session's, inactive (manual policy, or it was not active).
        case adopted
        /// The session's, reactivating: the caller waits, then finishes it.
        case reactivating(ActivationWait)
    }

    /// libjack is stuck in this process: said once, and reconnecting stops.
    func libraryWedged(_ why: String) {
        perform(machine.libraryWedged(why))
    }
}
