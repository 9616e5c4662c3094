import CJack
import Synchronization

/// A JACK client on a named server: a thin handle over `jack_client_t`.
///
/// Opening never starts a server. Notification callbacks, the latency callback
/// and the process callback must be set before `activate()`. Close it once;
/// using it after `close()` throws `JackError.clientClosed` or is undefined for
/// port handles already taken from it.
public final class Client: @unchecked Sendable {
    /// The libjack handle (`jack_client_t *`).
    public let handle: OpaquePointer
    /// The server this client talks to.
    public let serverName: String
    /// The name the server gave the client (may differ from the one asked for).
    public let name: String
    let bridge: CallbackBridge
    let bridgeRetain: Unmanaged<CallbackBridge>
    private let processorRetain = Mutex<Unmanaged<RealtimeProcessor>?>(nil)
    private let closed = Atomic<Bool>(false)

    /// The server name libjack uses when none is given: `$JACK_DEFAULT_SERVER` or "default".
    public static var defaultServerName: String {
        if let value = getenv("JACK_DEFAULT_SERVER"), value.pointee != 0 { return String(cString: value) }
        return "default"
    }

    /// Opens a client named `name` on the server `serverName` (nil: the default
    /// server). Never starts a server: a missing one is `JackError.serverNotRunning`.
    public init(name: String, serverName: String? = nil) throws(JackError) {
        let server = serverName ?? Client.defaultServerName
        var status = jack_status_t(rawValue: 0)
        let options = jack_options_t(rawValue: JackNoStartServer.rawValue)
        guard let handle = cjack_client_open(name, options, &status, server) else {
            if status.rawValue & JackServerFailed.rawValue != 0 {
                throw .serverNotRunning(server: server, status: status.rawValue)
            }
            throw .clientOpenFailed(client: name, server: server, status: status.rawValue)
        }
        self.handle = handle
        self.serverName = server
        self.name = String(cString: jack_get_client_name(handle))
        bridge = CallbackBridge()
        bridge.client = handle
        bridgeRetain = Unmanaged.passRetained(bridge)
    }

    deinit { close() }

    /// Closes the client (idempotent). Releases the callback contexts only
    /// after libjack has stopped calling them.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        jack_client_close(handle)
        bridgeRetain.release()
        processorRetain.withLock { retained in
            retained?.release()
            retained = nil
        }
    }

    /// Whether `close()` has been called.
    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    func ensureOpen() throws(JackError) {
        if isClosed { throw .clientClosed(client: name) }
    }

    // MARK: Callbacks

    /// Delivers every server notification to `handler` on libjack's
    /// notification thread. Call once, before `activate()`.
    public func setEventHandler(_ handler: @escaping @Sendable (ClientEvent) -> Void) throws(JackError) {
        try ensureOpen()
        bridge.eventHandler = handler
        try bridge.install(on: handle)
    }

    /// Calls `handler` whenever JACK recomputes latencies; the handler sets this
    /// client's port ranges with `Port.setLatencyRange`. Call before `activate()`.
    public func setLatencyHandler(_ handler: @escaping @Sendable (LatencyMode) -> Void) throws(JackError) {
        try ensureOpen()
        bridge.latencyHandler = handler
        try bridge.installLatencyCallback(on: handle)
    }

    /// Makes `processor` this client's real-time process callback. Call once, before `activate()`.
    public func setProcessor(_ processor: RealtimeProcessor) throws(JackError) {
        try ensureOpen()
        processor.touchBeforeActivation()
        let retained = Unmanaged.passRetained(processor)
        let code = jack_set_process_callback(handle, processTrampoline, retained.toOpaque())
        if code != 0 {
            retained.release()
            throw .callbackRegistrationFailed(callback: "process", code: code)
        }
        processorRetain.withLock { old in
            old?.release()
            old = retained
        }
    }

    // MARK: Activation

    /// Starts processing: from now on the process callback runs every period.
    public func activate() throws(JackError) {
        try ensureOpen()
        let code = jack_activate(handle)
        if code != 0 { throw .activationFailed(client: name, code: code) }
    }

    /// Stops processing; the server drops this client's connections.
    public func deactivate() throws(JackError) {
        try ensureOpen()
        let code = jack_deactivate(handle)
        if code != 0 { throw .activationFailed(client: name, code: code) }
    }

    // MARK: Server properties

    /// The server's sample rate, Hz.
    public var sampleRate: Int { Int(jack_get_sample_rate(handle)) }

    /// The server's current period, frames.
    public var bufferSize: Int { Int(jack_get_buffer_size(handle)) }

    /// Asks the server to run every client at `frames` per period. The server
    /// decides; read `bufferSize` afterwards.
    public func requestBufferSize(_ frames: Int) throws(JackError) {
        try ensureOpen()
        let code = jack_set_buffer_size(handle, jack_nframes_t(clamping: frames))
        if code != 0 { throw .bufferSizeRefused(frames: frames, server: serverName, code: code) }
    }

    /// The server's frame clock now (`jack_frame_time`).
    public var frameTime: UInt32 { jack_frame_time(handle) }

    /// The machine's monotonic clock (CLOCK_MONOTONIC, the clock jack_get_time
    /// reads on Linux), microseconds: the same in every process. Read directly
    /// because jack_get_time calls through a pointer libjack sets only when the
    /// process opens its first client.
    public static var microsecondTime: UInt64 { cjack_monotonic_nanoseconds() / 1000 }

    /// How late the last xrun's cycle was, microseconds (`jack_get_xrun_delayed_usecs`).
    public var xrunDelayMicroseconds: Double { Double(jack_get_xrun_delayed_usecs(handle)) }

    /// The server's DSP load, percent.
    public var cpuLoad: Double { Double(jack_cpu_load(handle)) }

    /// This client's UUID as JACK prints it (the metadata subject).
    public var uuid: UInt64 {
        guard let text = jack_client_get_uuid(handle) else { return 0 }
        defer { jack_free(text) }
        var uuid: jack_uuid_t = 0
        return jack_uuid_parse(text, &uuid) == 0 ? uuid : 0
    }

    // MARK: Ports

    /// Registers a port of this client; `shortName` is the part after the colon.
    public func registerPort(_ shortName: String, type: PortType = .audio, flags: PortFlags) throws(JackError) -> Port {
        try ensureOpen()
        guard let port = jack_port_register(handle, shortName, type.rawValue, UInt(flags.rawValue), 0) else {
            throw .portRegistrationFailed(port: "\(name):\(shortName)", client: name)
        }
        return Port(port)
    }

    /// Removes one of this client's ports.
    public func unregisterPort(_ port: Port) throws(JackError) {
        try ensureOpen()
        let code = jack_port_unregister(handle, port.handle)
        if code != 0 { throw .portRegistrationFailed(port: port.name, client: name) }
    }

    /// The port with this full name, if the server has one.
    public func port(named fullName: String) -> Port? {
        guard !isClosed, let port = jack_port_by_name(handle, fullName) else { return nil }
        return Port(port)
    }

    /// Full names of the ports whose name matches `pattern` (a regular
    /// expression; nil: all), of the given type, having all of `flags`.
    public func portNames(matching pattern: String? = nil, type: PortType? = .audio, flags: PortFlags = []) -> [String] {
        guard !isClosed, let list = jack_get_ports(handle, pattern, type?.rawValue, UInt(flags.rawValue)) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        return stringList(list)
    }

    /// Connects the output port `source` to the input port `destination`
    /// (full names). Already connected counts as success.
    public func connect(_ source: String, to destination: String) throws(JackError) {
        try ensureOpen()
        let code = jack_connect(handle, source, destination)
        if code != 0 && code != EEXIST {
            if port(named: source) == nil { throw .portNotFound(port: source, server: serverName) }
            if port(named: destination) == nil { throw .portNotFound(port: destination, server: serverName) }
            throw .connectionFailed(source: source, destination: destination, code: code)
        }
    }

    /// Disconnects `source` from `destination` (full names).
    public func disconnect(_ source: String, from destination: String) throws(JackError) {
        try ensureOpen()
        let code = jack_disconnect(handle, source, destination)
        if code != 0 { throw .disconnectionFailed(source: source, destination: destination, code: code) }
    }

    /// Asks the server to recompute every port's total latency now.
    public func recomputeLatencies() {
        guard !isClosed else { return }
        jack_recompute_total_latencies(handle)
    }
}
