import JackKit

/// Something jackd2 does that the JACK server a session talks to cannot,
/// found when the session opens its client: what is missing, what that costs
/// the session, and the configuration that adds it. A session says each one
/// once (`AudioSessionEvent.serverLimitation`); `jas status` lists them; what
/// cannot work at all without the piece throws it.
public struct ServerLimitation: Error, Encodable, Sendable, Equatable, CustomStringConvertible {
    /// The missing piece, named as its server names it.
    public let missing: String
    /// What does not work without it.
    public let consequence: String
    /// What adds it.
    public let remedy: String

    public var description: String { "\(missing) is missing: \(consequence). \(remedy)" }

    /// PipeWire keeps JACK metadata in its `default` metadata object, which a
    /// session manager (WirePlumber, pipewire-media-session) or the daemon's
    /// own configuration makes. A headless daemon without either has none.
    public static let pipeWireDefaultMetadata = ServerLimitation(
        missing: "PipeWire's 'default' metadata object",
        consequence: "JACK metadata cannot be read or written (jack_set_property fails), so port groups, device types "
            + "(urn:jackaudiosession:port-type) and pretty names are unknown and every device is told apart by client "
            + "name only; sessions in different processes still see each other (their registry is in /dev/shm)",
        remedy: "Add `{ factory = metadata args = { metadata.name = default } }` to context.objects in the daemon's "
            + "pipewire.conf (with `{ name = libpipewire-module-metadata }` in context.modules), or run a session "
            + "manager such as WirePlumber")

    /// What the server behind `client` lacks, as far as its libjack tells.
    public static func found(on client: Client) -> [ServerLimitation] {
        client.pipeWireLacksMetadata == true ? [.pipeWireDefaultMetadata] : []
    }
}
