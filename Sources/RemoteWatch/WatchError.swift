/// Why the watch server cannot start: each says what to do.
public enum WatchError: Error, Equatable, CustomStringConvertible {
    /// The listening address is not `ADDR:PORT`.
    case badAddress(String, reason: String)
    /// Another program listens there.
    case portInUse(String)
    /// The system refused to listen there (an address this machine does not have, a port below 1024).
    case cannotListen(String, reason: String)
    /// A non-loopback address without a token: anyone on the network could read the meters and the state.
    case tokenRequired(String)
    /// The token cannot be sent in an `Authorization: Bearer` header.
    case badToken(reason: String)

    public var description: String {
        switch self {
        case let .badAddress(text, reason):
            "the listening address '\(text)': \(reason); give ADDR:PORT, e.g. 127.0.0.1:8080, 0.0.0.0:8080 or [::1]:8080 "
                + "(PORT alone: 127.0.0.1)"
        case let .portInUse(address):
            "cannot listen on \(address): another program already listens there; choose another port (or stop that program)"
        case let .cannotListen(address, reason):
            "cannot listen on \(address): \(reason)"
        case let .tokenRequired(address):
            "\(address) is reachable from other machines, and without a token anyone who can reach it could "
                + "read the meters and the state, and stop nothing only because the control routes are off; give a "
                + "token (then every route asks for it: the page, its WebSocket, /metrics, /api/status and the "
                + "controls), or listen on 127.0.0.1 and reach it through an SSH tunnel"
        case let .badToken(reason):
            "the control token: \(reason)"
        }
    }
}
