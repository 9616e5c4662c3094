import JackKit

extension Client {
    /// Opens a client named `name` on the server `serverName` (nil: the
    /// default server), on the process's lifecycle lane, which then runs its
    /// deactivation and close (`ClientLifecycle`). Never starts a server: a
    /// missing one is `JackError.serverNotRunning`; `JackError.libraryWedged`
    /// once libjack is stuck in this process. It does not look at the server
    /// first: `checkedOpen` does (a stopped jackd, a damaged metadata store).
    public convenience init(name: String, serverName: String? = nil) throws(JackError) {
        let server = serverName ?? Client.defaultServerName
        try Self.checkNames(client: name, server: server)
        let lane = ClientLifecycle.shared
        let opened = try lane.open(name: name, server: server)
        guard let handle = opened.handle else { throw Self.openFailure(name: name, server: server, status: opened.status) }
        self.init(opened: handle, serverName: server, notificationThreadID: opened.notificationThreadID, lane: lane)
    }

    /// Opens a client the way every program of the package should: not while
    /// the server's jackd is stopped (SIGSTOP, Ctrl-Z, a debugger: the open
    /// would never return, and libjack would be stuck in the process), nor
    /// while JACK's metadata store is damaged (jackd2's libjack opens it with
    /// every client and dies of SIGBUS; PipeWire's has no store) or left
    /// locked (the server's jackd sleeps on a lock of it that no running
    /// program holds, and the open would too). Otherwise as
    /// `Client(name:serverName:)`.
    public static func checkedOpen(name: String, serverName: String? = nil) throws(JackError) -> Client {
        let server = serverName ?? Client.defaultServerName
        let jackd = ServerProcess.find(serverName: server)
        if let jackd, jackd.isStopped { throw .serverStopped(server: server, pid: jackd.pid) }
        if !LibraryVersion.isPipeWire, let damage = MetadataStore().problem(jackd: jackd) { throw damage.jackError }
        return try Client(name: name, serverName: server)
    }
}
