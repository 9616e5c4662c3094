import JackKit

extension Client {
    /// Opens a client the way every program of the package should: not while
    /// the server's jackd is stopped (SIGSTOP, Ctrl-Z, a debugger: the open
    /// would never return, and libjack would be stuck in the process), nor
    /// while JACK's metadata store is damaged (jackd2's libjack opens it with
    /// every client and dies of SIGBUS; PipeWire's has no store). Otherwise
    /// as `Client(name:serverName:)`.
    public static func checkedOpen(name: String, serverName: String? = nil) throws(JackError) -> Client {
        let server = serverName ?? Client.defaultServerName
        if let pid = ServerProcess.stopped(serverName: server) { throw .serverStopped(server: server, pid: pid) }
        if !LibraryVersion.isPipeWire, let damage = MetadataStore().damage() { throw damage.jackError }
        return try Client(name: name, serverName: server)
    }
}
