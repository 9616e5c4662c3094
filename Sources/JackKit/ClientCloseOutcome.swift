/// How `Client.close()` ended.
public enum ClientCloseOutcome: Sendable, Equatable {
    /// libjack closed the client.
    case closed
    /// The client had been closed before.
    case alreadyClosed
    /// libjack could not close it safely in time: it stays open, and no JACK
    /// client can be opened in this process any more (`reason` says why).
    case wedged(reason: String)
}
