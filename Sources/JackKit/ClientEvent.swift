/// A notification from the JACK server, delivered on libjack's non-real-time
/// notification thread.
public enum ClientEvent: Sendable, Equatable {
    /// The server reported an xrun (it carries no detail).
    case xrun
    /// The server went away or dropped this client. Delivered once even though
    /// libjack calls both of its shutdown callbacks.
    case shutdown(status: UInt32, reason: String)
    /// The period size changed, frames.
    case bufferSizeChanged(frames: Int)
    /// The sample rate changed, Hz.
    case sampleRateChanged(rate: Int)
    /// A port appeared (`registered` true) or disappeared; `name` is empty when
    /// the port was already gone.
    case portRegistration(name: String, registered: Bool)
    /// Two ports were connected or disconnected (source, destination).
    case portConnection(source: String, destination: String, connected: Bool)
    /// A client appeared or disappeared.
    case clientRegistration(name: String, registered: Bool)
    /// A metadata property changed on `subject`; `key` is empty when all of
    /// the subject's properties went.
    case propertyChange(subject: UInt64, key: String, change: PropertyChange)
}

/// What happened to a metadata property.
public enum PropertyChange: Sendable, Equatable {
    case created, changed, deleted
}
