import JackAudioSession

/// Why ports cannot be tapped: no port matches, fewer ports match than were
/// asked for, or the server cannot be reached. Each names the server or the
/// ports; which option of a tool chooses others is the tool's to say.
public enum CaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A port pattern matched no capture port on the server (its capture ports listed).
    case noSuchPort(pattern: String, server: String, available: [String])
    /// More channels were asked for than the patterns matched ports.
    case tooFewPorts(channels: Int, matched: [String])
    /// The probe that reads the server's ports could not open a client: the
    /// session's error, with the JACK error underneath.
    case session(AudioSessionError)

    public var description: String {
        switch self {
        case let .noSuchPort(pattern, server, available):
            "no capture port matches '\(pattern)' on JACK server '\(server)'"
                + (available.isEmpty ? " (the server has no capture ports)"
                   : "; capture ports there: " + available.prefix(16).joined(separator: ", ")
                     + (available.count > 16 ? ", … (\(available.count) in all)" : ""))
        case let .tooFewPorts(channels, matched):
            "\(channels) channels asked for, but only \(matched.count) port(s) matched: " + matched.joined(separator: ", ")
        case let .session(error):
            error.message
        }
    }
}
