import Foundation
import JackKit

/// Options for `setActive(_:options:)` (AVAudioSession.SetActiveOptions).
public struct SetActiveOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// On deactivation, tell the sessions this one interrupted that they may resume.
    public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
}

extension AudioSession {
    /// Activates or deactivates the session.
    ///
    /// Activation opens the JACK client (`mediaServicesFailed`, naming the
    /// server, when it is not running), applies the buffer-duration request,
    /// registers the category's ports (none for audioProcessing), starts
    /// processing and connects the ports to the route. The first activation
    /// posts a route change with reason `categoryChange`. Deactivation fails
    /// with `isBusy` while an attached audio object runs.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) throws(AudioSessionError) {
        transition.lock()
        defer { transition.unlock() }
        if active {
            try activateLocked(postFirstCategoryChange: true)
        } else {
            try deactivateLocked(checkBusy: true)
            didDeactivate(notifyingOthers: options.contains(.notifyOthersOnDeactivation))
        }
    }

    /// With `tolerateMissingPorts` (a reset), named ports that are not back
    /// yet are connected when they appear instead of failing the activation,
    /// and the session keeps its place in the activation order.
    func activateLocked(postFirstCategoryChange: Bool, tolerateMissingPorts: Bool = false) throws(AudioSessionError) {
        guard !isActive else { return }
        // The place in the activation order is taken when the request is made.
        let requestedAt = Client.microsecondTime
        let prefs = preferences.withLock { $0 }
        let client = try openOrReuseClient()
        if !tolerateMissingPorts {
            try checkActivationAllowed(on: client)
            announceActivation(order: requestedAt, on: client)
        }
        var activated = false
        defer { if !activated { withdrawAnnouncement(on: client) } }
        let catalog = DeviceCatalog(client: client)
        let history = activation.withLock { state -> DeviceHistory in
            if !state.hasBeenActive && state.history.inputs.isEmpty && state.history.outputs.isEmpty {
                state.history = DeviceHistory(catalog: catalog)
            } else {
                _ = state.history.update(from: state.catalog, to: catalog)
            }
            state.catalog = catalog
            return state.history
        }
        // Channel counts: the preference (default 2), clamped to what the route offers.
        // Under multiRoute with streams, the streams' ports are the outputs.
        let maxima = RoutePlanner.plan(request(prefs, inputs: Int.max, outputs: Int.max), catalog: catalog, history: history)
        if prefs.category == .multiRoute && maxima.route.inputs.count > 1 {
            throw AudioSessionError(.badParam, "multiRoute takes its input from a single device, but the named input "
                                        + "ports belong to " + maxima.route.inputs.map(\.uid).joined(separator: ", "))
        }
        let inputCount = prefs.category.hasInput
            ? try channelCount(prefs.inputChannels, maximum: maxima.inputPorts.count, direction: "input") : 0
        let outputNames = try outputPortNames(prefs, maximum: maxima.outputPorts.count)
        if let duration = prefs.ioBufferDuration { try requestPeriod(for: duration, on: client) }

        let ports: SessionPorts
        var idle = activation.withLock { state -> [JackKit.Port] in
            defer { state.idlePorts = [] }
            return state.idlePorts
        }
        do {
            func port(_ shortName: String, _ flags: PortFlags) throws(JackError) -> JackKit.Port {
                if let index = idle.firstIndex(where: { $0.shortName == shortName && $0.flags.contains(flags) }) {
                    return idle.remove(at: index)
                }
                return try client.registerPort(shortName, flags: flags)
            }
            defer { for stale in idle { try? client.unregisterPort(stale) } }
            let inputs = try (0..<inputCount).map { index throws(JackError) in try port("in_\(index + 1)", .input) }
            let outputs = try outputNames.map { name throws(JackError) in try port(name, .output) }
            ports = SessionPorts(inputs: inputs, outputs: outputs, addedLatencyFrames: 0,
                                 portNamed: { [weak client] name in client?.port(named: name) })
        } catch {
            throw AudioSessionError(.resourceNotAvailable, error.description, cause: error)
        }
        let processor = RealtimeProcessor(client: client, inputs: ports.inputs, outputs: ports.outputs,
                                          costRecorder: cycleCostRecorder, render: renderBlock)
        processor.setSilencesInputs(prefs.category.hasInput && recordPermission != .granted)
        activation.withLock {
            $0.ports = ports
            $0.processor = processor
        }
        do {
            try client.setProcessor(processor)
            try client.activate()
        } catch {
            unregister(ports, on: client)
            throw AudioSessionError(.mediaServicesFailed, error.description, cause: error)
        }
        let plan = RoutePlanner.plan(request(prefs, inputs: inputCount, outputs: outputNames.count), catalog: catalog,
                                     history: history)
        do {
            let passesBefore = latencyPasses.load(ordering: .acquiring)
            try connect(ports, to: plan, on: client, tolerateMissingPorts: tolerateMissingPorts)
            waitForLatencyPass(after: passesBefore, on: client)
        } catch {
            try? client.deactivate()
            unregister(ports, on: client)
            throw error
        }
        let first = activation.withLock { state -> Bool in
            state.plan = plan
            state.isActive = true
            defer { state.hasBeenActive = true }
            return !state.hasBeenActive
        }
        if first && postFirstCategoryChange {
            hub.post(.routeChange(reason: .categoryChange, previousRoute: .empty, currentRoute: plan.route, streams: []))
        }
        activated = true
        didActivate(processor: processor, order: tolerateMissingPorts ? nil : requestedAt)
    }

    func deactivateLocked(checkBusy: Bool) throws(AudioSessionError) {
        let (client, ports, active) = activation.withLock { ($0.client, $0.ports, $0.isActive) }
        guard let client, active else { return }
        if checkBusy && hasRunningAudioObject {
            throw AudioSessionError(.isBusy, "an audio object attached to the session is still running; stop it "
                                        + "before deactivating the session")
        }
        do {
            try client.deactivate()
        } catch {
            throw AudioSessionError(.mediaServicesFailed, error.description, cause: error)
        }
        if let ports {
            if Self.keepsPortsWhileInactive {
                activation.withLock {
                    $0.idlePorts = ports.inputs + ports.outputs
                    $0.ports = nil
                    $0.processor = nil
                }
            } else {
                unregister(ports, on: client)
            }
        }
        activation.withLock {
            $0.isActive = false
            $0.plan = .none
        }
    }

    func request(_ prefs: Preferences, inputs: Int, outputs: Int) -> RoutePlanner.Request {
        RoutePlanner.Request(category: prefs.category, outputOverride: prefs.outputOverride,
                             preferredInput: prefs.preferredInput, explicitInputs: prefs.inputPortNames,
                             explicitOutputs: prefs.outputPortNames, inputChannels: inputs, outputChannels: outputs,
                             streams: prefs.category == .multiRoute ? prefs.streams : [])
    }

    /// The short names of the output ports an activation registers: the
    /// streams' ports under multiRoute, else `out_1`… for the preferred count
    /// (default 2) clamped to what the route offers.
    func outputPortNames(_ prefs: Preferences, maximum: Int) throws(AudioSessionError) -> [String] {
        guard prefs.category.hasOutput else { return [] }
        if prefs.category == .multiRoute && !prefs.streams.isEmpty { return prefs.streams.flatMap(\.portNames) }
        let count = try channelCount(prefs.outputChannels, maximum: maximum, direction: "output")
        return (0..<count).map { "out_\($0 + 1)" }
    }

    func openOrReuseClient() throws(AudioSessionError) -> Client {
        if let client = openClient, !client.isClosed { return client }
        let client = try makeClient()
        install(client)
        return client
    }

    /// Opens a JACK client for the session with its handlers, without making it the session's.
    func makeClient() throws(AudioSessionError) -> Client {
        do {
            let client = try Client(name: clientName, serverName: serverName)
            try client.setEventHandler { [weak self] event in self?.handle(event) }
            try client.setLatencyHandler { [weak self] mode in self?.reportLatency(mode) }
            return client
        } catch {
            throw AudioSessionError(.mediaServicesFailed, "cannot reach the media server: \(error.description)", cause: error)
        }
    }

    /// Makes `client` the session's.
    func install(_ client: Client) {
        lastPeriod.store(client.bufferSize, ordering: .relaxed)
        lastSampleRate.store(client.sampleRate, ordering: .relaxed)
        activation.withLock {
            $0.client = client
            $0.idlePorts = []
        }
        let found = ServerLimitation.found(on: client)
        let unsaid = limitationsSaid.withLock { said -> [ServerLimitation] in
            let unsaid = found.filter { !said.contains($0) }
            said += unsaid
            return unsaid
        }
        for limitation in unsaid { hub.post(.serverLimitation(limitation)) }
    }

    /// What the session's server lacks that jackd2 has, as found when the
    /// session opened its client (each was said once as `serverLimitation`).
    public var serverLimitations: [ServerLimitation] { limitationsSaid.withLock { $0 } }

    /// Whether deactivation keeps the session's ports registered for the
    /// next activation instead of unregistering them. PipeWire's libjack
    /// (0.3.65) loses a port unregistered and registered again at once under
    /// the same name: the server reuses the old port's id and announces the
    /// new one under a default name, libjack never learns the new port's id,
    /// and connecting it fails with EINVAL. jackd2 keeps today's behaviour
    /// (an inactive session has no ports).
    static var keepsPortsWhileInactive: Bool { LibraryVersion.isPipeWire }

    /// Connects the session's ports to the plan's ports, channel by channel,
    /// and drops any other connection they have. Returns how many of the
    /// plan's connections were missing and are made now.
    @discardableResult
    func connect(_ ports: SessionPorts, to plan: RoutePlan, on client: Client,
                 tolerateMissingPorts: Bool = false) throws(AudioSessionError) -> Int {
        let correction = latencyCalibration?.correction(server: serverName, capturePorts: plan.inputPorts,
                                                        playbackPorts: plan.outputPorts.compactMap { $0 }) ?? .none
        let correctionChanged = ports.correction.withLock { current -> Bool in
            defer { current = correction }
            return current != correction
        }
        if correctionChanged { client.recomputeLatencies() }
        var wanted: [(String, String)] = Array(zip(plan.inputPorts, ports.inputs.map(\.name)))
        wanted += zip(ports.outputs.map(\.name), plan.outputPorts).compactMap { port, destination in
            destination.map { (port, $0) }
        }
        // The route leaves devices (hardware ports) the plan no longer names,
        // and the ports the plan named before; connections that other clients
        // made to the session's ports (a recorder tapping its outputs) stay.
        let routed = Set(activation.withLock { $0.plan.inputPorts + $0.plan.outputPorts.compactMap { $0 } })
        func isRoute(_ name: String) -> Bool {
            routed.contains(name) || client.port(named: name)?.flags.contains(.physical) == true
        }
        for port in ports.inputs {
            for source in port.connections where isRoute(source) && !wanted.contains(where: { $0 == (source, port.name) }) {
                try? client.disconnect(source, from: port.name)
            }
        }
        for port in ports.outputs {
            for destination in port.connections
            where isRoute(destination) && !wanted.contains(where: { $0 == (port.name, destination) }) {
                try? client.disconnect(port.name, from: destination)
            }
        }
        var existing = Set<[String]>()
        for port in ports.inputs { for source in port.connections { existing.insert([source, port.name]) } }
        for port in ports.outputs { for destination in port.connections { existing.insert([port.name, destination]) } }
        var made = 0
        for (source, destination) in wanted {
            if tolerateMissingPorts && (client.port(named: source) == nil || client.port(named: destination) == nil) {
                continue
            }
            do {
                try client.connect(source, to: destination)
            } catch {
                throw AudioSessionError(.resourceNotAvailable, error.description, cause: error)
            }
            if !existing.contains([source, destination]) { made += 1 }
        }
        return made
    }

    func unregister(_ ports: SessionPorts, on client: Client) {
        for port in ports.inputs + ports.outputs { try? client.unregisterPort(port) }
        activation.withLock {
            $0.ports = nil
            $0.processor = nil
        }
    }

    // MARK: JACK notifications (libjack's notification thread: hand off, never block)

    func handle(_ event: ClientEvent) {
        switch event {
        case .xrun:
            xruns.add(1, ordering: .relaxed)
            worker.asyncAfter(deadline: .now() + 0.25) { [weak self] in self?.reportXruns() }
        case let .bufferSizeChanged(frames):
            // JACK also calls this at activation with the unchanged size.
            guard lastPeriod.exchange(frames, ordering: .relaxed) != frames else { return }
            worker.async { [weak self] in
                guard let self, let client = self.openClient else { return }
                self.hub.post(.ioBufferDurationChange(seconds: Double(frames) / Double(client.sampleRate), frames: frames))
            }
        case .portRegistration:
            scheduleRouteRefresh()
        case let .clientRegistration(name, registered):
            scheduleRouteRefresh()
            // A session's client that went away may have been interrupting or ducking this one.
            if !registered {
                forgetClient(named: name)
                scheduleArbitration()
            }
        case let .shutdown(_, reason):
            worker.async { [weak self] in self?.mediaServicesLost(reason: reason.isEmpty ? "JACK server shut down" : reason) }
        default:
            break
        }
    }

    /// Posts the xruns not yet reported as one event (at most four a second).
    func reportXruns() {
        let total = xruns.load(ordering: .relaxed)
        let reported = xrunsReported.exchange(total, ordering: .relaxed)
        guard total > reported else { return }
        let delay = activeClient?.xrunDelayMicroseconds ?? 0
        hub.post(.xrun(count: total - reported, total: total, delayMicroseconds: delay))
    }

    /// Coalesces a burst of registrations (a device's ports, its client) into
    /// one refresh, run when no registration came for 50 ms: a device that is
    /// being plugged or unplugged port by port is never seen half there.
    func scheduleRouteRefresh() {
        let generation = registrationGeneration.add(1, ordering: .acquiringAndReleasing).newValue
        worker.asyncAfter(deadline: .now() + 0.05) { [weak self] in
            guard let self, self.registrationGeneration.load(ordering: .acquiring) == generation else { return }
            self.refreshRoute()
        }
    }

    /// Re-reads the devices; when the route the rules choose has changed,
    /// reconnects and posts the route change with its reason.
    func refreshRoute(reason forcedReason: RouteChangeReason? = nil) {
        transition.lock()
        defer { transition.unlock() }
        // Not on a client whose server went away: its close is coming on the
        // lifecycle lane, and libjack calls racing it crashed the 100-restart
        // test (rehearsal 28: WaitGraphChange's assertion). The reset refreshes.
        guard let client = openClient, !client.isClosed, !client.serverWentAway else { return }
        let catalog = DeviceCatalog(client: client)
        let (change, history, active, ports, previous) = activation.withLock { state in
            let change = state.history.update(from: state.catalog, to: catalog)
            state.catalog = catalog
            return (change, state.history, state.isActive, state.ports, state.plan)
        }
        guard active, let ports else { return }
        let prefs = preferences.withLock { $0 }
        let plan = RoutePlanner.plan(request(prefs, inputs: ports.inputs.count, outputs: ports.outputs.count),
                                     catalog: catalog, history: history)
        // Reconnect every time (idempotent): named ports may have come back.
        let restored = (try? connect(ports, to: plan, on: client, tolerateMissingPorts: true)) ?? 0
        // The same route whose connections had to be made again: its ports
        // were made anew within one burst of registrations (a netjack2
        // slave's net driver does that when its master returns), or someone
        // else disconnected them. A configuration change of the same route.
        let remade = plan == previous && restored > 0
        guard plan != previous || forcedReason != nil || remade else { return }
        activation.withLock { $0.plan = plan }
        let reason: RouteChangeReason
        if let forcedReason {
            reason = forcedReason
        } else if (!ports.outputs.isEmpty && plan.route.outputs.isEmpty) || (!ports.inputs.isEmpty && plan.inputPorts.isEmpty) {
            // Only a direction the session has ports for: multiRoute on a
            // server without capture devices (PipeWire with sinks only) has none.
            reason = .noSuitableRouteForCategory
        } else if change.appeared && !change.vanished {
            reason = .newDeviceAvailable
        } else if change.vanished {
            reason = .oldDeviceUnavailable
        } else {
            reason = .routeConfigurationChange
        }
        // Under multiRoute: the streams that lost or regained their destination.
        let streams = Set(previous.streamsWithoutDestination).symmetricDifference(plan.streamsWithoutDestination)
        if !streams.isEmpty { scheduleArbitration() }   // publishes the streams' state
        hub.post(.routeChange(reason: reason, previousRoute: previous.route, currentRoute: plan.route,
                              streams: prefs.streams.map(\.name).filter(streams.contains)))
    }

    func reportLatency(_ mode: LatencyMode) {
        activation.withLock { $0.ports }?.reportLatency(mode)
        if mode == .playback { latencyPasses.add(1, ordering: .releasing) }
    }

    /// Waits (at most one second) until JACK has run the session's latency
    /// callback after its connections were made, so the ranges are current.
    func waitForLatencyPass(after before: Int, on client: Client) {
        client.recomputeLatencies()
        let deadline = Date().addingTimeInterval(1)
        while latencyPasses.load(ordering: .acquiring) <= before, Date() < deadline { usleep(1_000) }
    }

    func requestPeriod(for seconds: Double, on client: Client) throws(AudioSessionError) {
        let frames = BufferDuration.periodFrames(forDuration: seconds, sampleRate: client.sampleRate)
        guard frames != client.bufferSize else { return }
        do {
            try client.requestBufferSize(frames)
        } catch {
            throw AudioSessionError(.badParam, error.description, cause: error)
        }
    }

    func checkChannelCount(_ count: Int, maximum: Int?, direction: String) throws(AudioSessionError) {
        guard count >= 1 else {
            throw AudioSessionError(.badParam, "preferred \(direction) channel count must be at least 1, got \(count)")
        }
        if let maximum, count > maximum {
            throw AudioSessionError(.badParam, "\(count) \(direction) channels asked for, but the route on server "
                                        + "'\(serverName)' offers at most \(maximum); ask for fewer or name more ports")
        }
    }

    func channelCount(_ preferred: Int?, maximum: Int, direction: String) throws(AudioSessionError) -> Int {
        guard let preferred else { return min(2, maximum) }
        if preferred == 0 && direction == "output" { return 0 }
        try checkChannelCount(preferred, maximum: maximum, direction: direction)
        return preferred
    }
}
