import JackKit

/// What the session reads of a server's ports to know its devices: the
/// physical audio ports, their UUIDs and the clients', and the metadata set
/// on them. A `Client` answers from the server; a value holding ports and
/// properties answers the same questions without one, so what the session
/// decides from them (`DeviceCatalog`, `DataSourceTraits`) can be tested alone.
public protocol PortDirectory {
    /// Full names of the audio ports having all of `flags`, in the server's order.
    func audioPortNames(flags: PortFlags) -> [String]
    /// The UUID of the port with this full name (a metadata subject); nil when there is none.
    func portUUID(named fullName: String) -> UInt64?
    /// The UUID of the client with this name (a metadata subject); nil when there is none.
    func clientUUID(named clientName: String) -> UInt64?
    /// The value of the metadata property `key` on `subject`; nil when it has none.
    func property(_ key: String, on subject: UInt64) -> String?
}

extension Client: PortDirectory {
    public func audioPortNames(flags: PortFlags) -> [String] { portNames(flags: flags) }
    public func portUUID(named fullName: String) -> UInt64? { port(named: fullName)?.uuid }
    public func clientUUID(named clientName: String) -> UInt64? { uuid(ofClient: clientName) }
}
