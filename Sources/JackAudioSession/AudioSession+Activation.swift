import Foundation
import JackKit

/// Options for `setActive(_:options:)` (AVAudioSession.SetActiveOptions).
public struct SetActiveOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// On deactivation, tell the sessions this one interrupted that they may resume.
    public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
}

extension AudioSession {
    /// Activates or deactivates the session.
    ///
    /// Activation opens the JACK client (`mediaServicesFailed`, naming the
    /// server, when it is not running), applies the buffer-duration request,
    /// registers the category's ports (none for audioProcessing), starts
    /// processing and connects the ports to the route. The first activation
    /// posts a route change with reason `categoryChange`. Deactivation fails
    /// with `isBusy` while an attached audio object runs.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) throws(AudioSessionError) {
        try complete(core.sync { core throws(AudioSessionError) in try core.setActive(active, options: options) })
    }

    /// Takes an activation begun on the queue to its end: its wait for JACK
    /// off the queue, then its finish on the queue.
    func complete(_ wait: SessionCore.ActivationWait?) throws(AudioSessionError) {
        guard let wait else { return }
        wait.wait(on: board)
        try core.sync { core throws(AudioSessionError) in try core.finish(wait) }
    }

    /// Reaches the JACK server without taking any audio: opens the session's
    /// client (never starting a server) and publishes the session as
    /// inactive. From then on the inactive session follows the devices:
    /// `currentRoute` shows the route an activation would take, and route
    /// changes are posted, as the seeds post them to inactive apps, so an idle
    /// tool sees an interface arrive before it arms a take. Activation opens
    /// the client too, and a session keeps following after it deactivates.
    /// `mediaServicesFailed`, naming the server, when it is not running.
    public func open() throws(AudioSessionError) {
        try core.sync { core throws(AudioSessionError) in try core.open() }
    }

    /// What the session's server lacks that jackd2 has, as found when the
    /// session opened its client (each was said once as `serverLimitation`).
    public var serverLimitations: [ServerLimitation] { board.read { $0.limitations } }

    /// Whether deactivation keeps the session's ports registered for the
    /// next activation instead of unregistering them. PipeWire's libjack
    /// (0.3.65) loses a port unregistered and registered again at once under
    /// the same name: the server reuses the old port's id and announces the
    /// new one under a default name, libjack never learns the new port's id,
    /// and connecting it fails with EINVAL. jackd2 keeps today's behaviour
    /// (an inactive session has no ports).
    static var keepsPortsWhileInactive: Bool { LibraryVersion.isPipeWire }
}
