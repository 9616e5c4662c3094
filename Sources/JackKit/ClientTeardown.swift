import CJack
import Synchronization

/// What closing a client takes, held apart from `Client` so that a close
/// still running on its lane never reaches a deinitialised client: the
/// handle, the callbacks' contexts (kept alive until libjack can no longer
/// call them), the calls in flight and the C calls of a close, each as it is.
/// The order and the waits between them are the lane's (`ClientLane`).
package final class ClientTeardown: @unchecked Sendable { // libjack's handle and retains, released once, by the lane
    package let handle: OpaquePointer
    /// The client's name as the server gave it.
    package let name: String
    package let serverName: String
    /// "JACK client 'NAME' on server 'SERVER'", for messages.
    package let label: String
    /// The Linux thread id of libjack's notification thread for this client (0: unknown).
    package let notificationThreadID: Int32
    let bridge: CallbackBridge
    let liveness: ClientLiveness
    private let bridgeRetain: Unmanaged<CallbackBridge>
    /// The process callback's context, kept alive until libjack can no longer call it.
    let processorRetain = Mutex<Unmanaged<any AnyObject & Sendable>?>(nil)

    init(handle: OpaquePointer, name: String, serverName: String, notificationThreadID: Int32,
         bridge: CallbackBridge, liveness: ClientLiveness) {
        self.handle = handle
        self.name = name
        self.serverName = serverName
        label = "JACK client '\(name)' on server '\(serverName)'"
        self.notificationThreadID = notificationThreadID
        self.bridge = bridge
        self.liveness = liveness
        bridgeRetain = Unmanaged.passRetained(bridge)
    }

    /// Whether the close has begun.
    package var isClosed: Bool { liveness.isClosed }

    /// Whether the server told this client it went away (its shutdown callback ran).
    package var serverWentAway: Bool { bridge.serverWentAway }

    /// Begins the close: no call on the client starts from now on and no
    /// callback reaches its handlers. True only for the first caller.
    package func beginClose() -> Bool {
        guard liveness.markClosed() else { return false }
        bridge.gate()
        return true
    }

    /// After `beginClose`: waits (at most `seconds`) until no call is inside
    /// libjack on the client or its ports; false when one still is.
    package func waitForCallsInFlight(within seconds: Double) -> Bool {
        liveness.waitForCallsInFlight(within: seconds)
    }

    /// `jack_deactivate`.
    package func deactivateHandle() { jack_deactivate(handle) }

    /// `jack_client_close`, then the callbacks' contexts are let go: libjack calls them no more.
    package func closeHandle() {
        jack_client_close(handle)
        bridgeRetain.release()
        processorRetain.withLock { retained in
            retained?.release()
            retained = nil
        }
    }

    /// After the lane closed the client because its server went away: its
    /// handler hears of the loss if the shutdown callback never got to say it.
    package func deliverPendingShutdown() { bridge.deliverPendingShutdown() }
}
