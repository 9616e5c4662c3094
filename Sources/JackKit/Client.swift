import CJack
import Synchronization

/// A JACK client on a named server: a thin handle over `jack_client_t`.
///
/// Made by the layer that opens clients (JackRuntime's `Client(name:serverName:)`),
/// which it keeps as its `ClientLane`. Opening never starts a server.
/// Notification callbacks, the latency callback and the process callback must
/// be set before `activate()`. Close it once; using it after `close()` throws
/// `JackError.clientClosed` or is undefined for port handles already taken from it.
public final class Client: @unchecked Sendable { // holds libjack's handle; requests go one at a time through `requestLock`, a close waits for `liveness`
    /// The libjack handle (`jack_client_t *`).
    public let handle: OpaquePointer
    /// The server this client talks to.
    public let serverName: String
    /// The name the server gave the client (may differ from the one asked for).
    public let name: String
    /// What closing it takes; also its callbacks' bridge and its liveness.
    let teardown: ClientTeardown
    let lane: any ClientLane
    var bridge: CallbackBridge { teardown.bridge }
    /// Open or closed, and the calls inside libjack on this client or its
    /// ports right now: a close waits for them.
    var liveness: ClientLiveness { teardown.liveness }
    /// libjack sends a client's requests over one socket with no lock of its
    /// own: two threads' requests interleave, jackd reads garbage ("Unknown
    /// request") and drops the client. JackKit sends one at a time per client.
    private let requestLock = RequestLock()

    /// The server name libjack uses when none is given: `$JACK_DEFAULT_SERVER` or "default".
    public static var defaultServerName: String {
        if let value = getenv("JACK_DEFAULT_SERVER"), value.pointee != 0 { return String(cString: value) }
        return "default"
    }

    /// What `jack_client_open` gave.
    package struct OpenResult: @unchecked Sendable { // libjack's handle, carried out of the lane's closure that wrote it
        package let handle: OpaquePointer?
        package let status: UInt32
        /// The Linux thread id of the client's notification thread (0: unknown).
        package let notificationThreadID: Int32
    }

    /// `jack_client_open` of `name` on `server`, never starting a server; the
    /// notification thread libjack started for it is noted as it starts.
    package static func openHandle(name: String, server: String) -> OpenResult {
        var status = jack_status_t(rawValue: 0)
        var tid: Int32 = 0
        let options = jack_options_t(rawValue: JackNoStartServer.rawValue)
        let handle = cjack_client_open_watched(name, options, &status, server, &tid)
        return OpenResult(handle: handle, status: status.rawValue, notificationThreadID: tid)
    }

    /// The error of an open that gave no client.
    package static func openFailure(name: String, server: String, status: UInt32) -> JackError {
        status & JackServerFailed.rawValue != 0 ? .serverNotRunning(server: server, status: status)
            : .clientOpenFailed(client: name, server: server, status: status)
    }

    /// Wraps a client `lane` opened (`openHandle`); the lane hears of it.
    package init(opened handle: OpaquePointer, serverName: String, notificationThreadID: Int32, lane: any ClientLane) {
        let name = String(cString: jack_get_client_name(handle))
        let bridge = CallbackBridge()
        let liveness = ClientLiveness()
        bridge.client = handle
        bridge.serverGoneHandler = { lane.serverWentAway() }
        bridge.installShutdownCallbacks(on: handle)
        self.handle = handle
        self.serverName = serverName
        self.name = name
        uuid = Self.readUUID(of: handle)
        self.lane = lane
        teardown = ClientTeardown(handle: handle, name: name, serverName: serverName,
                                  notificationThreadID: notificationThreadID, bridge: bridge, liveness: liveness)
        lane.opened(teardown)
    }

    deinit { close() }

    /// Closes the client (idempotent): no callback reaches the handlers once
    /// this is called, and the lane deactivates and closes it once no call is
    /// inside libjack on it, releasing the callback contexts only after
    /// libjack has stopped calling them. `.wedged` when libjack could not
    /// close it safely in time: the process can open no client any more.
    @discardableResult
    public func close() -> ClientCloseOutcome {
        guard teardown.beginClose() else { return .alreadyClosed }
        return lane.close(teardown)
    }

    /// Whether the server told this client it went away (its shutdown callback ran).
    public var serverWentAway: Bool { bridge.serverWentAway }

    /// Whether `close()` has been called.
    public var isClosed: Bool { liveness.isClosed }

    func ensureOpen() throws(JackError) {
        if isClosed { throw .clientClosed(client: name) }
    }

    /// Runs `body` with the libjack handle while the client is open; nil once
    /// it is closed. A close (by the owner, or by the lane when the server went
    /// away) waits until no such call is running, so no thread reaches a
    /// freed client.
    func whileOpen<T>(_ body: (OpaquePointer) throws(JackError) -> T) throws(JackError) -> T? {
        try liveness.whileOpen { () throws(JackError) in try body(handle) }
    }

    /// `whileOpen` for calls that fail with `JackError.clientClosed` once it is closed.
    func withOpenHandle<T>(_ body: (OpaquePointer) throws(JackError) -> T) throws(JackError) -> T {
        guard let value = try whileOpen(body) else { throw .clientClosed(client: name) }
        return value
    }

    /// The longest server name whose socket path (`/dev/shm/jack_NAME_UID_0`)
    /// fits a Unix socket address (108 bytes): libjack cuts a longer one
    /// short, or overruns its buffers on one of over 256 bytes and aborts.
    public static var longestServerName: Int { 107 - "/dev/shm/jack__\(getuid())_0".utf8.count }

    /// Refuses names libjack cannot take, before libjack sees them.
    package static func checkNames(client: String, server: String) throws(JackError) {
        try checkName("client", client, atMost: Int(jack_client_name_size()) - 1, why: "JACK takes",
                      forbidden: ":", because: "':' separates a client from its port names")
        try checkName("server", server, atMost: longestServerName, why: "JACK's socket path has room for",
                      forbidden: "/", because: "'/' cannot be part of JACK's socket file name")
    }

    private static func checkName(_ kind: String, _ name: String, atMost limit: Int, why: String,
                                  forbidden: Character, because: String) throws(JackError) {
        if name.isEmpty { throw .invalidName(kind: kind, name: name, reason: "it is empty") }
        if name.utf8.count > limit {
            throw .invalidName(kind: kind, name: name, reason: "it has \(name.utf8.count) bytes; \(why) at most "
                               + "\(limit); choose a shorter one")
        }
        if name.contains(forbidden) { throw .invalidName(kind: kind, name: name, reason: because) }
    }

    /// Sends one request to the server on this client: while it is open, one
    /// at a time, with SIGPIPE blocked. `JackError.clientClosed` once closed.
    func request<T>(_ body: (OpaquePointer) -> T) throws(JackError) -> T {
        try withOpenHandle { handle in
            requestLock.withLock { withoutBrokenPipeSignal { body(handle) } }
        }
    }

    /// `request`, or nil once the client is closed.
    func requestIfOpen<T>(_ body: (OpaquePointer) -> T) -> T? {
        try? whileOpen { handle in requestLock.withLock { withoutBrokenPipeSignal { body(handle) } } }
    }

    // MARK: Callbacks

    /// Delivers every server notification to `handler` on libjack's
    /// notification thread. Call once, before `activate()`.
    public func setEventHandler(_ handler: @escaping @Sendable (ClientEvent) -> Void) throws(JackError) {
        try withOpenHandle { handle throws(JackError) in
            bridge.eventHandler = handler
            try bridge.install(on: handle)
        }
    }

    /// Calls `handler` whenever JACK recomputes latencies; the handler sets this
    /// client's port ranges with `Port.setLatencyRange`. Call before `activate()`.
    public func setLatencyHandler(_ handler: @escaping @Sendable (LatencyMode) -> Void) throws(JackError) {
        try withOpenHandle { handle throws(JackError) in
            bridge.latencyHandler = handler
            try bridge.installLatencyCallback(on: handle)
        }
    }

    /// Whether a latency handler is installed (`setLatencyHandler`): without
    /// one, libjack sets the client's port ranges itself.
    public var hasLatencyHandler: Bool { bridge.latencyHandler != nil }

    /// Makes `callback` this client's real-time process callback
    /// (`jack_set_process_callback`), called with `argument` every cycle;
    /// `owner`, which `argument` belongs to, is kept alive until the client is
    /// closed. Call once, before `activate()`.
    public func setProcessCallback(_ callback: @escaping @convention(c) (UInt32, UnsafeMutableRawPointer?) -> Int32,
                                   argument: UnsafeMutableRawPointer,
                                   keepingAlive owner: any AnyObject & Sendable) throws(JackError) {
        try ensureOpen()
        let retained = Unmanaged.passRetained(owner)
        let code = try whileOpen { jack_set_process_callback($0, callback, argument) } ?? -1
        if code != 0 {
            retained.release()
            throw .callbackRegistrationFailed(callback: "process", code: code)
        }
        teardown.processorRetain.withLock { old in
            old?.release()
            old = retained
        }
    }

    // MARK: Activation

    /// Starts processing: from now on the process callback runs every period.
    public func activate() throws(JackError) {
        let code = try request { jack_activate($0) }
        if code != 0 { throw .activationFailed(client: name, code: code) }
    }

    /// Stops processing; the server drops this client's connections. On the
    /// lane and within its close bound: jackd answers a deactivation only
    /// after notifying every client, and a client that stopped reading its
    /// notifications (#395's stuck thread) can block jackd for ever, so a
    /// deactivation that never returns marks libjack wedged instead of
    /// hanging its caller.
    public func deactivate() throws(JackError) {
        let code = try lane.deactivate(teardown) { [self] in
            Result { () throws(JackError) in try request { jack_deactivate($0) } }
        }.get()
        if code != 0 { throw .activationFailed(client: name, code: code) }
    }

    // MARK: Server properties

    /// The server's sample rate, Hz.
    public var sampleRate: Int { (try? whileOpen { Int(jack_get_sample_rate($0)) }) ?? 0 }

    /// The server's current period, frames.
    public var bufferSize: Int { (try? whileOpen { Int(jack_get_buffer_size($0)) }) ?? 0 }

    /// Asks the server to run every client at `frames` per period. The server
    /// decides; read `bufferSize` afterwards.
    public func requestBufferSize(_ frames: Int) throws(JackError) {
        let code = try request { jack_set_buffer_size($0, jack_nframes_t(clamping: frames)) }
        if code != 0 { throw .bufferSizeRefused(frames: frames, server: serverName, code: code) }
    }

    /// The server's frame clock now (`jack_frame_time`).
    public var frameTime: UInt32 { (try? whileOpen { jack_frame_time($0) }) ?? 0 }

    /// The frame time at the start of the server's current cycle
    /// (`jack_last_frame_time`): the clock the process callback sees, so it
    /// lines up with what a capture stamped its cycles with. `frameTime`
    /// extrapolates from the last cycle by the wall clock instead, and after
    /// the server ran no cycles for a while (a netjack2 slave waiting for its
    /// master) it is seconds away from the cycles' frame times.
    public var cycleFrameTime: UInt32 { (try? whileOpen { jack_last_frame_time($0) }) ?? 0 }

    /// The machine's monotonic clock (CLOCK_MONOTONIC, the clock jack_get_time
    /// reads on Linux), microseconds: the same in every process. Read directly
    /// because jack_get_time calls through a pointer libjack sets only when the
    /// process opens its first client.
    public static var microsecondTime: UInt64 { cjack_monotonic_nanoseconds() / 1000 }

    /// How late the last xrun's cycle was, microseconds (`jack_get_xrun_delayed_usecs`).
    public var xrunDelayMicroseconds: Double { (try? whileOpen { Double(jack_get_xrun_delayed_usecs($0)) }) ?? 0 }

    /// The server's DSP load, percent.
    public var cpuLoad: Double { (try? whileOpen { Double(jack_cpu_load($0)) }) ?? 0 }

    /// This client's UUID (the metadata subject): the server's for as long
    /// as this value lives, closed or not, read once at the open, as its name
    /// is (0 only if libjack gave none then).
    public let uuid: UInt64

    /// `jack_client_get_uuid`, parsed; 0 when libjack gives none.
    private static func readUUID(of handle: OpaquePointer) -> UInt64 {
        guard let text = jack_client_get_uuid(handle) else { return 0 }
        defer { jack_free(text) }
        var uuid: jack_uuid_t = 0
        return jack_uuid_parse(text, &uuid) == 0 ? uuid : 0
    }

    // MARK: Ports

    /// Registers a port of this client; `shortName` is the part after the colon.
    public func registerPort(_ shortName: String, type: PortType = .audio, flags: PortFlags) throws(JackError) -> Port {
        let registered = try request { jack_port_register($0, shortName, type.rawValue, UInt(flags.rawValue), 0) }
        guard let port = registered else {
            throw .portRegistrationFailed(port: "\(name):\(shortName)", client: name)
        }
        return Port(port, of: liveness)
    }

    /// Removes one of this client's ports.
    public func unregisterPort(_ port: Port) throws(JackError) {
        let code = try request { jack_port_unregister($0, port.handle) }
        if code != 0 { throw .portRegistrationFailed(port: port.name, client: name) }
    }

    /// The port with this full name, if the server has one.
    public func port(named fullName: String) -> Port? {
        guard let port = (try? whileOpen { jack_port_by_name($0, fullName) }) ?? nil else { return nil }
        return Port(port, of: liveness)
    }

    /// Full names of the ports whose name matches `pattern` (a regular
    /// expression; nil: all), of the given type, having all of `flags`.
    public func portNames(matching pattern: String? = nil, type: PortType? = .audio, flags: PortFlags = []) -> [String] {
        guard let list = (try? whileOpen { jack_get_ports($0, pattern, type?.rawValue, UInt(flags.rawValue)) }) ?? nil else {
            return []
        }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        return stringList(list)
    }

    /// The ports matching `pattern` (a regular expression; nil: all), of the
    /// given type, having all of `flags`: every one, whatever bytes its name
    /// holds (each is looked up by the name libjack gave, not a copy).
    public func ports(matching pattern: String? = nil, type: PortType? = .audio, flags: PortFlags = []) -> [Port] {
        (try? whileOpen { handle -> [Port] in
            guard let list = jack_get_ports(handle, pattern, type?.rawValue, UInt(flags.rawValue)) else { return [] }
            defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
            var ports: [Port] = []
            var index = 0
            while let entry = list[index] {
                if let port = jack_port_by_name(handle, entry) { ports.append(Port(port, of: liveness)) }
                index += 1
            }
            return ports
        }) ?? []
    }

    /// Connects the output port `source` to the input port `destination`
    /// (full names). Already connected counts as success.
    public func connect(_ source: String, to destination: String) throws(JackError) {
        let code = try request { jack_connect($0, source, destination) }
        if code != 0 && code != EEXIST {
            if port(named: source) == nil { throw .portNotFound(port: source, server: serverName) }
            if port(named: destination) == nil { throw .portNotFound(port: destination, server: serverName) }
            throw .connectionFailed(source: source, destination: destination, code: code)
        }
    }

    /// Disconnects `source` from `destination` (full names).
    public func disconnect(_ source: String, from destination: String) throws(JackError) {
        let code = try request { jack_disconnect($0, source, destination) }
        if code != 0 { throw .disconnectionFailed(source: source, destination: destination, code: code) }
    }

    /// Asks the server to recompute every port's total latency now.
    public func recomputeLatencies() {
        _ = requestIfOpen { jack_recompute_total_latencies($0) }
    }
}
