import JackKit

/// What a program saw of a jackd2 server when its client opened: whether its
/// request socket was where jackd2 keeps it, and whether a jackd process
/// serving the name was found. Both false on PipeWire's JACK, jackdbus, or a
/// jackd whose sockets or process this program cannot see: then their absence
/// later says nothing. When they were seen, their absence later means the
/// server is not there (a killed jackd leaves its socket; a stopping one
/// removes it before tearing its metadata store down), and asking libjack
/// then would only wait in Berkeley DB.
public struct ServerPresence: Sendable, Equatable {
    public var requestSocket = false
    public var process = false

    public init(requestSocket: Bool = false, process: Bool = false) {
        self.requestSocket = requestSocket
        self.process = process
    }

    /// Whether the server seen so is away now (nothing can be known when nothing was seen).
    public func isAway(serverName: String) -> Bool {
        (requestSocket && !ServerProcess.requestSocketExists(serverName: serverName))
            || (process && ServerProcess.serving(serverName: serverName) == nil)
    }
}
