import CJack
import Dispatch
import Synchronization

/// The Swift side of libjack's non-real-time callbacks. Kept alive with
/// `passRetained` until after `jack_client_close`.
final class CallbackBridge: @unchecked Sendable { // the handlers and `client` are set before activation and only read after; the rest is atomics
    /// Set before activation, read on the notification thread.
    var eventHandler: (@Sendable (ClientEvent) -> Void)?
    /// Set before activation, called when JACK recomputes latencies.
    var latencyHandler: (@Sendable (LatencyMode) -> Void)?
    /// The client handle, for looking up ports by id.
    var client: OpaquePointer?
    /// Told when the server went away, before any handler (the client's lane). Set before activation.
    var serverGoneHandler: (@Sendable () -> Void)?
    /// Makes the two shutdown callbacks one event.
    let shutdownDelivered = Atomic<Bool>(false)
    /// Set when the server said it went away, whether or not a handler heard it.
    private let serverGone = Atomic<Bool>(false)
    /// Set when the client starts closing: from then on no callback does any
    /// work (libjack may cancel its thread in the middle of one).
    private let gated = Atomic<Bool>(false)

    var isGated: Bool { gated.load(ordering: .acquiring) }

    /// Whether the server told this client it went away.
    var serverWentAway: Bool { serverGone.load(ordering: .acquiring) }

    /// Stops every later callback from reaching the handlers.
    func gate() { gated.store(true, ordering: .releasing) }

    func deliver(_ event: ClientEvent) {
        guard !isGated else { return }
        eventHandler?(event)
    }

    func deliverShutdown(status: UInt32, reason: String) {
        StepTrace.note("shutdown callback: \(reason)")
        serverGone.store(true, ordering: .releasing)
        serverGoneHandler?()
        guard !isGated, !shutdownDelivered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        eventHandler?(.shutdown(status: status, reason: reason))
    }

    /// After the lane closed the client because its server went away: the
    /// handler hears of the loss if its shutdown callback never got to say it.
    func deliverPendingShutdown() {
        guard let handler = eventHandler, !shutdownDelivered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DispatchQueue.global().async { handler(.shutdown(status: JackServerError.rawValue, reason: "JACK server went away")) }
    }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ arg: UnsafeMutableRawPointer?) -> CallbackBridge {
        Unmanaged<CallbackBridge>.fromOpaque(arg!).takeUnretainedValue()
    }

    /// Installs the two shutdown callbacks (every client has them: the lane
    /// must know which clients' server went away). Must be called before activation.
    func installShutdownCallbacks(on client: OpaquePointer) {
        jack_on_info_shutdown(client, { status, reason, arg in
            CallbackBridge.from(arg).deliverShutdown(
                status: status.rawValue, reason: reason.map { String(cString: $0) } ?? "")
        }, opaque)
        jack_on_shutdown(client, { arg in
            CallbackBridge.from(arg).deliverShutdown(status: JackServerError.rawValue, reason: "JACK server shut down")
        }, opaque)
    }

    /// Installs every other notification callback on `client`. Must be called before activation.
    func install(on client: OpaquePointer) throws(JackError) {
        func check(_ code: Int32, _ name: String) throws(JackError) {
            if code != 0 { throw .callbackRegistrationFailed(callback: name, code: code) }
        }
        try check(jack_set_xrun_callback(client, { arg in
            CallbackBridge.from(arg).deliver(.xrun)
            return 0
        }, opaque), "xrun")
        try check(jack_set_buffer_size_callback(client, { frames, arg in
            CallbackBridge.from(arg).deliver(.bufferSizeChanged(frames: Int(frames)))
            return 0
        }, opaque), "buffer size")
        try check(jack_set_sample_rate_callback(client, { rate, arg in
            CallbackBridge.from(arg).deliver(.sampleRateChanged(rate: Int(rate)))
            return 0
        }, opaque), "sample rate")
        try check(jack_set_port_registration_callback(client, { id, registered, arg in
            let bridge = CallbackBridge.from(arg)
            guard !bridge.isGated else { return }
            var name = ""
            if let client = bridge.client, let port = jack_port_by_id(client, id), let text = jack_port_name(port) {
                name = printableName(text)
            }
            bridge.deliver(.portRegistration(name: name, registered: registered != 0))
        }, opaque), "port registration")
        try check(jack_set_port_connect_callback(client, { a, b, connected, arg in
            let bridge = CallbackBridge.from(arg)
            guard !bridge.isGated, let client = bridge.client else { return }
            let source = jack_port_by_id(client, a).flatMap { jack_port_name($0) }.map { printableName($0) } ?? ""
            let destination = jack_port_by_id(client, b).flatMap { jack_port_name($0) }.map { printableName($0) } ?? ""
            bridge.deliver(.portConnection(source: source, destination: destination, connected: connected != 0))
        }, opaque), "port connect")
        try check(jack_set_client_registration_callback(client, { name, registered, arg in
            CallbackBridge.from(arg).deliver(
                .clientRegistration(name: name.map { String(cString: $0) } ?? "", registered: registered != 0))
        }, opaque), "client registration")
        try check(jack_set_property_change_callback(client, { subject, key, change, arg in
            let kind: PropertyChange = switch change {
            case PropertyCreated: .created
            case PropertyDeleted: .deleted
            default: .changed
            }
            CallbackBridge.from(arg).deliver(
                .propertyChange(subject: subject, key: key.map { String(cString: $0) } ?? "", change: kind))
        }, opaque), "property change")
    }

    /// Where PipeWire's latency callbacks are handled (see `installLatencyCallback`).
    static let pipeWireLatencyQueue = DispatchQueue(label: "jackkit.pipewire-latency")

    /// Installs the latency callback. Only when there is a handler: a client
    /// with an empty latency callback breaks JACK's latency propagation.
    ///
    /// PipeWire's libjack (0.3.65) calls it with its thread loop's lock
    /// released, and a `jack_port_set_latency_range` made there updates the
    /// port at once, unlocked, on the connection another thread may be
    /// writing (`jack_connect` under way): its message builder is torn
    /// (`assert_single_pod` aborted `jas selftest`, or a memcpy crashed).
    /// There the handler runs on a queue of its own instead: from any other
    /// thread, libjack hands the update to its loop, which applies it locked.
    func installLatencyCallback(on client: OpaquePointer) throws(JackError) {
        let code = jack_set_latency_callback(client, { mode, arg in
            let bridge = CallbackBridge.from(arg)
            guard !bridge.isGated else { return }
            let latencyMode = LatencyMode(mode)
            guard LibraryVersion.isPipeWire else { bridge.latencyHandler?(latencyMode); return }
            CallbackBridge.pipeWireLatencyQueue.async {
                guard !bridge.isGated else { return }
                bridge.latencyHandler?(latencyMode)
            }
        }, opaque)
        if code != 0 { throw .callbackRegistrationFailed(callback: "latency", code: code) }
    }
}
