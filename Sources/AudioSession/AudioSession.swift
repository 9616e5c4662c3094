import Foundation
import JackKit
import Synchronization

/// What the render block receives every cycle: the JACK port buffers themselves.
public typealias RenderCycle = ProcessCycle

/// An audio session in the shape of AVAudioSession, backed by one JACK client.
///
/// Preferences are requests; the JACK server decides, and the session reports
/// what it actually got. The client is opened on first activation and never
/// starts a server.
public final class AudioSession: @unchecked Sendable {
    /// The process-wide session, named after the program, on the default server.
    public static let shared = AudioSession()

    /// The JACK client name the session asks for.
    public let clientName: String
    /// The JACK server the session uses.
    public let serverName: String

    struct Preferences {
        var category: Category = .soloAmbient
        var mode: Mode = .default
        var ioBufferDuration: Double?
        var sampleRate: Double?
        var inputChannels: Int?
        var outputChannels: Int?
        var inputPortNames: [String] = []
        var outputPortNames: [String] = []
    }

    struct Activation {
        var client: Client?
        var ports: SessionPorts?
        var processor: RealtimeProcessor?
        var isActive = false
    }

    private let preferences = Mutex(Preferences())
    /// Guarded by `transition`. Not an Optional: a closure stored in one is
    /// reabstracted, and every real-time call would go through thunks.
    private nonisolated(unsafe) var renderBlock: RenderBlock = renderSilence
    /// Guarded by `transition`.
    private nonisolated(unsafe) var cycleCostRecorder: CycleCostRecorder?
    private let activation = Mutex(Activation())
    /// Serialises activation, deactivation and close; JACK callbacks never take it.
    private let transition = NSLock()
    private let latencyPasses = Atomic<Int>(0)
    private let xruns = Atomic<Int>(0)

    /// A session that will open a JACK client named `clientName` on the server
    /// `serverName` (nil: `$JACK_DEFAULT_SERVER` or "default").
    public init(clientName: String = ProcessInfo.processInfo.processName, serverName: String? = nil) {
        self.clientName = clientName
        self.serverName = serverName ?? Client.defaultServerName
    }

    deinit { close() }

    // MARK: Category and mode

    /// The session's category; soloAmbient until set.
    public var category: Category { preferences.withLock { $0.category } }

    /// The session's mode; default until set.
    public var mode: Mode { preferences.withLock { $0.mode } }

    /// Sets the category and mode. The mode must be one the category allows
    /// (`incompatibleCategory` otherwise). Takes effect at the next activation.
    public func setCategory(_ category: Category, mode: Mode = .default) throws(AudioSessionError) {
        guard mode.compatibleCategories.contains(category) else {
            throw AudioSessionError(.incompatibleCategory,
                                    "mode \(mode.rawValue) cannot be used with category \(category.rawValue); it allows "
                                        + mode.compatibleCategories.map(\.rawValue).sorted().joined(separator: ", "))
        }
        preferences.withLock {
            $0.category = category
            $0.mode = mode
        }
    }

    // MARK: Render

    /// Sets the block that runs on JACK's real-time thread every cycle with the
    /// session's port buffers. Takes effect at the next activation.
    public func setRenderBlock(_ block: @escaping RenderBlock) {
        transition.lock()
        defer { transition.unlock() }
        renderBlock = block
    }

    /// Removes the render block: the outputs are silent from the next activation.
    public func removeRenderBlock() {
        transition.lock()
        defer { transition.unlock() }
        renderBlock = renderSilence
    }

    /// Records how long each process cycle takes (for benchmarks). Takes
    /// effect at the next activation.
    public func setCycleCostRecorder(_ recorder: CycleCostRecorder?) {
        transition.lock()
        defer { transition.unlock() }
        cycleCostRecorder = recorder
    }

    // MARK: Preferences

    /// The I/O buffer duration the app asked for, seconds (0: none).
    public var preferredIOBufferDuration: Double { preferences.withLock { $0.ioBufferDuration ?? 0 } }

    /// Asks for an I/O buffer duration, seconds. Applied on activation (and at
    /// once when active) as a JACK period-size request: the power of two
    /// nearest to duration × sample rate, within 16…4096 frames.
    public func setPreferredIOBufferDuration(_ seconds: Double) throws(AudioSessionError) {
        guard seconds.isFinite, seconds > 0 else {
            throw AudioSessionError(.badParam, "preferred I/O buffer duration must be a positive number of seconds, got \(seconds)")
        }
        preferences.withLock { $0.ioBufferDuration = seconds }
        if let client = activeClient { try requestPeriod(for: seconds, on: client) }
    }

    /// The sample rate the app asked for, Hz (0: none). A running JACK server
    /// keeps its rate; compare with `sampleRate`.
    public var preferredSampleRate: Double { preferences.withLock { $0.sampleRate ?? 0 } }

    /// Stores a preferred sample rate, Hz. JACK cannot change a running
    /// server's rate, so a mismatch shows in `sampleRate`.
    public func setPreferredSampleRate(_ rate: Double) throws(AudioSessionError) {
        guard rate.isFinite, rate > 0 else {
            throw AudioSessionError(.badParam, "preferred sample rate must be a positive number of Hz, got \(rate)")
        }
        preferences.withLock { $0.sampleRate = rate }
    }

    /// The number of input channels the session registers at activation (default 2,
    /// clamped to what is available unless set explicitly).
    public var preferredInputNumberOfChannels: Int { preferences.withLock { $0.inputChannels ?? 2 } }

    /// The number of output channels the session registers at activation.
    public var preferredOutputNumberOfChannels: Int { preferences.withLock { $0.outputChannels ?? 2 } }

    /// Asks for `count` input channels; more than `maximumInputNumberOfChannels`
    /// is `badParam` (checked now when the server is known, else at activation).
    public func setPreferredInputNumberOfChannels(_ count: Int) throws(AudioSessionError) {
        try checkChannelCount(count, maximum: openClient.map { maximumChannels(.input, on: $0) }, direction: "input")
        preferences.withLock { $0.inputChannels = count }
    }

    /// Asks for `count` output channels; more than the maximum is `badParam`.
    public func setPreferredOutputNumberOfChannels(_ count: Int) throws(AudioSessionError) {
        try checkChannelCount(count, maximum: openClient.map { maximumChannels(.output, on: $0) }, direction: "output")
        preferences.withLock { $0.outputChannels = count }
    }

    /// The JACK ports the session's inputs connect to, in channel order
    /// (empty: the server's physical capture ports).
    public var preferredInputPortNames: [String] { preferences.withLock { $0.inputPortNames } }

    /// Names the ports the session's inputs connect to (e.g. `loopback:capture_1`).
    public func setPreferredInputPortNames(_ names: [String]) {
        preferences.withLock { $0.inputPortNames = names }
    }

    /// The JACK ports the session's outputs connect to, in channel order
    /// (empty: the server's physical playback ports).
    public var preferredOutputPortNames: [String] { preferences.withLock { $0.outputPortNames } }

    /// Names the ports the session's outputs connect to (e.g. `loopback:playback_1`).
    public func setPreferredOutputPortNames(_ names: [String]) {
        preferences.withLock { $0.outputPortNames = names }
    }

    // MARK: What the server actually runs

    /// The server's sample rate, Hz (0 before the session first reached a server).
    public var sampleRate: Double { openClient.map { Double($0.sampleRate) } ?? 0 }

    /// The period the server actually runs, seconds; follows changes made by
    /// any client.
    public var ioBufferDuration: Double {
        guard let client = openClient else { return 0 }
        return Double(client.bufferSize) / Double(client.sampleRate)
    }

    /// The server's period, frames (0 before the session first reached a server).
    public var ioBufferFrames: Int { openClient?.bufferSize ?? 0 }

    /// Capture latency of the session's inputs, seconds: the largest delay JACK
    /// reports from the capture hardware to the session.
    public var inputLatency: Double { seconds(inputLatencyRange.max) }

    /// Playback latency of the session's outputs, seconds: the largest delay
    /// JACK reports from the session to the playback hardware.
    public var outputLatency: Double { seconds(outputLatencyRange.max) }

    /// Capture latency range of the session's inputs, frames.
    public var inputLatencyRange: LatencyRange { activation.withLock { $0.ports?.inputLatencyRange } ?? .zero }

    /// Playback latency range of the session's outputs, frames.
    public var outputLatencyRange: LatencyRange { activation.withLock { $0.ports?.outputLatencyRange } ?? .zero }

    /// Input channels the active session has (0 when inactive).
    public var inputNumberOfChannels: Int { activation.withLock { $0.ports?.inputs.count } ?? 0 }

    /// Output channels the active session has (0 when inactive).
    public var outputNumberOfChannels: Int { activation.withLock { $0.ports?.outputs.count } ?? 0 }

    /// The most input channels the session can have: the named ports, or the
    /// server's physical capture ports.
    public var maximumInputNumberOfChannels: Int { openClient.map { maximumChannels(.input, on: $0) } ?? 0 }

    /// The most output channels the session can have.
    public var maximumOutputNumberOfChannels: Int { openClient.map { maximumChannels(.output, on: $0) } ?? 0 }

    /// Full names of the session's own input ports.
    public var inputPortNames: [String] { activation.withLock { $0.ports?.inputs.map(\.name) } ?? [] }

    /// Full names of the session's own output ports.
    public var outputPortNames: [String] { activation.withLock { $0.ports?.outputs.map(\.name) } ?? [] }

    /// Whether the session is active.
    public var isActive: Bool { activation.withLock { $0.isActive } }

    /// Xruns the server reported since the session opened its client.
    public var xrunCount: Int { xruns.load(ordering: .relaxed) }

    /// Process cycles completed in the current activation.
    public var cyclesCompleted: UInt64 {
        activation.withLock { $0.processor?.cyclesCompleted.load(ordering: .acquiring) } ?? 0
    }

    /// The session's JACK client, once opened (for tools that need the raw client).
    public var client: Client? { openClient }

    // MARK: Activation

    /// Activates or deactivates the session. Activation opens the JACK client
    /// (`mediaServicesFailed` naming the server if it is not running), applies
    /// the buffer-duration preference, registers the category's ports, starts
    /// processing and connects the ports. Deactivation stops processing and
    /// removes the ports.
    public func setActive(_ active: Bool) throws(AudioSessionError) {
        transition.lock()
        defer { transition.unlock() }
        if active { try activate() } else { try deactivate() }
    }

    /// Deactivates and closes the JACK client. The session can be activated again.
    public func close() {
        transition.lock()
        defer { transition.unlock() }
        let client = activation.withLock { state -> Client? in
            let client = state.client
            state = Activation()
            return client
        }
        client?.close()
    }

    private func activate() throws(AudioSessionError) {
        guard !isActive else { return }
        let prefs = preferences.withLock { $0 }
        let client = try openOrReuseClient()
        let inputCount = prefs.category.hasInput
            ? try channelCount(prefs.inputChannels, maximum: maximumChannels(.input, on: client), direction: "input") : 0
        let outputCount = prefs.category.hasOutput
            ? try channelCount(prefs.outputChannels, maximum: maximumChannels(.output, on: client), direction: "output") : 0
        if let duration = prefs.ioBufferDuration { try requestPeriod(for: duration, on: client) }

        let ports: SessionPorts
        do {
            let inputs = try (0..<inputCount).map { index throws(JackError) in
                try client.registerPort("in_\(index + 1)", flags: .input)
            }
            let outputs = try (0..<outputCount).map { index throws(JackError) in
                try client.registerPort("out_\(index + 1)", flags: .output)
            }
            ports = SessionPorts(inputs: inputs, outputs: outputs, addedLatencyFrames: 0)
        } catch {
            throw AudioSessionError(.resourceNotAvailable, error.description)
        }
        let processor = RealtimeProcessor(client: client, inputs: ports.inputs, outputs: ports.outputs,
                                          costRecorder: cycleCostRecorder, render: renderBlock)
        activation.withLock {
            $0.ports = ports
            $0.processor = processor
        }
        do {
            try client.setProcessor(processor)
            try client.activate()
        } catch {
            unregister(ports, on: client)
            throw AudioSessionError(.mediaServicesFailed, error.description)
        }
        do {
            let passesBefore = latencyPasses.load(ordering: .acquiring)
            try connect(zip(targets(prefs.inputPortNames, .input, on: client), ports.inputs.map(\.name)), on: client)
            try connect(zip(ports.outputs.map(\.name), targets(prefs.outputPortNames, .output, on: client)), on: client)
            waitForLatencyPass(after: passesBefore, on: client)
        } catch {
            try? client.deactivate()
            unregister(ports, on: client)
            throw error
        }
        activation.withLock { $0.isActive = true }
    }

    private func deactivate() throws(AudioSessionError) {
        let (client, ports) = activation.withLock { ($0.client, $0.ports) }
        guard let client, activation.withLock({ $0.isActive }) else { return }
        do {
            try client.deactivate()
        } catch {
            throw AudioSessionError(.mediaServicesFailed, error.description)
        }
        if let ports { unregister(ports, on: client) }
        activation.withLock { $0.isActive = false }
    }

    // MARK: Helpers

    private var openClient: Client? { activation.withLock { $0.client } }

    private var activeClient: Client? { activation.withLock { $0.isActive ? $0.client : nil } }

    private func seconds(_ frames: Int) -> Double {
        let rate = sampleRate
        return rate > 0 ? Double(frames) / rate : 0
    }

    private func openOrReuseClient() throws(AudioSessionError) -> Client {
        if let client = openClient, !client.isClosed { return client }
        let client: Client
        do {
            client = try Client(name: clientName, serverName: serverName)
            try client.setEventHandler { [weak self] event in self?.handle(event) }
            try client.setLatencyHandler { [weak self] mode in self?.reportLatency(mode) }
        } catch {
            throw AudioSessionError(.mediaServicesFailed, "cannot reach the media server: \(error.description)")
        }
        activation.withLock { $0.client = client }
        return client
    }

    private func handle(_ event: ClientEvent) {
        switch event {
        case .xrun: xruns.add(1, ordering: .relaxed)
        default: break
        }
    }

    private func reportLatency(_ mode: LatencyMode) {
        activation.withLock { $0.ports }?.reportLatency(mode)
        if mode == .playback { latencyPasses.add(1, ordering: .releasing) }
    }

    /// Waits (at most one second) until JACK has run the session's latency
    /// callback after its connections were made, so the ranges are current.
    private func waitForLatencyPass(after before: Int, on client: Client) {
        client.recomputeLatencies()
        let deadline = Date().addingTimeInterval(1)
        while latencyPasses.load(ordering: .acquiring) <= before, Date() < deadline { usleep(1_000) }
    }

    private func requestPeriod(for seconds: Double, on client: Client) throws(AudioSessionError) {
        let frames = BufferDuration.periodFrames(forDuration: seconds, sampleRate: client.sampleRate)
        guard frames != client.bufferSize else { return }
        do {
            try client.requestBufferSize(frames)
        } catch {
            throw AudioSessionError(.badParam, error.description)
        }
    }

    private func maximumChannels(_ direction: PortFlags, on client: Client) -> Int {
        let named = direction == .input ? preferredInputPortNames : preferredOutputPortNames
        if !named.isEmpty { return named.count }
        return physicalPorts(direction, on: client).count
    }

    /// Physical ports the session's ports of `direction` connect to: capture
    /// ports (outputs of the hardware) for inputs, playback ports for outputs.
    private func physicalPorts(_ direction: PortFlags, on client: Client) -> [String] {
        client.portNames(flags: [.physical, direction == .input ? .output : .input])
    }

    private func targets(_ named: [String], _ direction: PortFlags, on client: Client) -> [String] {
        named.isEmpty ? physicalPorts(direction, on: client) : named
    }

    private func checkChannelCount(_ count: Int, maximum: Int?, direction: String) throws(AudioSessionError) {
        guard count >= 1 else {
            throw AudioSessionError(.badParam, "preferred \(direction) channel count must be at least 1, got \(count)")
        }
        if let maximum, count > maximum {
            throw AudioSessionError(.badParam, "\(count) \(direction) channels asked for, but server '\(serverName)' "
                                        + "offers at most \(maximum); ask for fewer or name more ports")
        }
    }

    private func channelCount(_ preferred: Int?, maximum: Int, direction: String) throws(AudioSessionError) -> Int {
        guard let preferred else { return min(2, maximum) }
        try checkChannelCount(preferred, maximum: maximum, direction: direction)
        return preferred
    }

    /// Connects each (source, destination) pair: one channel each.
    private func connect(_ pairs: Zip2Sequence<[String], [String]>, on client: Client) throws(AudioSessionError) {
        for (source, destination) in pairs {
            do {
                try client.connect(source, to: destination)
            } catch {
                throw AudioSessionError(.resourceNotAvailable, error.description)
            }
        }
    }

    private func unregister(_ ports: SessionPorts, on client: Client) {
        for port in ports.inputs + ports.outputs { try? client.unregisterPort(port) }
        activation.withLock {
            $0.ports = nil
            $0.processor = nil
        }
    }
}
