import Foundation
import JackKit
import JackRuntime

/// Activation: opening the client, registering the category's ports,
/// starting the processor, connecting the route, and the reverse.
extension SessionCore {
    /// What an activation waits for once its ports are connected: JACK's
    /// latency pass over them, and the period it asked for (each at most a
    /// second). The caller waits off the queue, so the timers, JACK's
    /// messages and the app's other calls are served meanwhile; `finish`
    /// then checks with the machine that the attempt is still the session's
    /// (a loss or a close may have overtaken it).
    struct ActivationWait: @unchecked Sendable { // a client, a processor and a plan handed from the queue to the waiting caller and back
        let attempt: SessionMachine.Attempt
        let client: Client
        let latencyPassesBefore: Int
        let period: Int?
        let plan: RoutePlan
        let ports: SessionPorts
        let processor: RealtimeProcessor
        /// The place in the activation order (nil: a reset keeps its place).
        let order: UInt64?
        /// A category change while active: the route it changed from, posted once active again.
        var categoryChangeFrom: RouteDescription?

        /// Waits, off the queue, until JACK ran the session's latency callback
        /// after its connections were made (so the ranges are current; without
        /// the callback, until the connections run, then asks for the pass:
        /// libjack's propagation reads the graph jackd runs, and jackd2 has
        /// run the pass when `jack_recompute_total_latencies` returns), and
        /// until the server runs the period asked for. jackd has changed it
        /// before `jack_set_buffer_size` returns; PipeWire sets the node's
        /// `node.force-quantum` and the graph takes it some cycles later, once
        /// the node runs (1.4 lets go of it while the node is inactive). A
        /// server that gives another period is reported as it is.
        func wait(on board: SessionBoard) {
            if ports.setsOwnRanges {
                let seen = processor.awaitCycles(within: 1) {
                    board.latencyPasses.load(ordering: .acquiring) > latencyPassesBefore
                }
                StepTrace.note("activation: latency pass " + (seen ? "seen" : "not seen within 1 s"))
            } else {
                ports.awaitRunning(plan, within: 1, on: processor)
                client.recomputeLatencies()
                StepTrace.note("activation: latency pass done, the connections running")
            }
            if let period { SessionCore.awaitPeriod(period, on: client, processor) }
        }
    }

    /// Activates or deactivates the session at the app's request; an
    /// activation returns what it waits for (`AudioSession.complete`).
    func setActive(_ active: Bool, options: SetActiveOptions) throws(AudioSessionError) -> ActivationWait? {
        if active {
            guard let attempt = machine.activationRequested() else { return nil }
            return try begin(attempt)
        }
        try deactivate()
        didDeactivate(notifyingOthers: options.contains(.notifyOthersOnDeactivation))
        return nil
    }

    /// Sets category, mode and options, already resolved by the rules; while
    /// active the ports are rebuilt for the new category at once.
    func setCategory(_ category: Category, mode: Mode, options: CategoryOptions)
        throws(AudioSessionError) -> ActivationWait? {
        preferences.category = category
        preferences.mode = mode
        preferences.options = options
        if !category.hasOutput || category != .playAndRecord { preferences.outputOverride = .none }
        let previous = activation.plan.route
        switch machine.categoryChanged() {
        case .applyAtActivation:
            // "If your session is inactive, the category request is sent when you activate your session":
            // nothing is said now; the route shown is the one that activation would take.
            if openClient != nil { activation.plan = idlePlan() }
            return nil
        case let .rebuild(attempt):
            do {
                try stopClient()
            } catch {
                fail(attempt)
                throw error
            }
            var wait = try begin(attempt)
            wait.categoryChangeFrom = previous
            return wait
        }
    }

    /// Starts an activation the machine allowed: everything up to the
    /// connections. A failure is told to the machine.
    func begin(_ attempt: SessionMachine.Attempt) throws(AudioSessionError) -> ActivationWait {
        do {
            return try activate(attempt)
        } catch {
            fail(attempt)
            throw error
        }
    }

    /// Tells the machine the attempt failed, and carries out what it says.
    private func fail(_ attempt: SessionMachine.Attempt) {
        let client = openClient
        perform(machine.activationFailed(attempt.number, clientOpen: client != nil, server: client.map(Self.format), at: .now))
    }

    /// Ends an activation once its wait is over: active, unless a loss or a
    /// close overtook it meanwhile.
    func finish(_ wait: ActivationWait) throws(AudioSessionError) {
        switch machine.overtaken(wait.attempt.number) {
        case nil: break
        case .closed?: throw AudioSessionError(.mediaServicesFailed, "the session was closed while it activated")
        case .serverGone?:
            throw AudioSessionError(.mediaServicesFailed, "the media server '\(serverName)' went away while the session activated")
        }
        activation.plan = wait.plan
        perform(machine.activationSucceeded(wait.attempt.number, server: Self.format(of: wait.client), order: wait.order,
                                            clockMicroseconds: Client.microsecondTime, at: .now) ?? [])
        didActivate(processor: wait.processor)
        if let previous = wait.categoryChangeFrom {
            hub.post(.routeChange(reason: .categoryChange, previousRoute: previous, currentRoute: activation.plan.route,
                                  streams: []))
        }
    }

    /// A client's rate and period.
    static func format(of client: Client) -> ServerFormat {
        ServerFormat(sampleRate: Double(client.sampleRate), period: client.bufferSize)
    }

    /// The JACK work of an activation: open or reuse the client, register
    /// the category's ports, start the processor, connect the route. A
    /// reset's reactivation connects named ports that are not back yet when
    /// they appear, instead of failing, and keeps its place in the activation
    /// order; an app's activation is announced to the other sessions first.
    private func activate(_ attempt: SessionMachine.Attempt) throws(AudioSessionError) -> ActivationWait {
        let isReset = attempt.reset != nil
        // The place in the activation order is taken when the request is made.
        let requestedAt = Client.microsecondTime
        let prefs = preferences
        let client = try openOrReuseClient()
        if !isReset {
            try checkActivationAllowed(on: client)
            announceActivation(attempt, order: requestedAt, on: client)
        }
        lookAtDevices(on: client)
        StepTrace.note("activation: devices looked at")
        let catalog = activation.catalog
        let history = activation.history
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
        let requestedPeriod = try prefs.ioBufferDuration.flatMap { duration throws(AudioSessionError) in
            try requestPeriod(for: duration, on: client)
        }

        let assignment = PortAssignment(inputs: (0..<inputCount).map { "in_\($0 + 1)" }, outputs: outputNames,
                                        kept: activation.idlePorts)
        activation.idlePorts = []
        let ports: SessionPorts
        do {
            let registered = try assignment.carryOut(
                register: { wanted throws(JackError) in try client.registerPort(wanted.shortName, flags: wanted.flags) },
                unregister: { try? client.unregisterPort($0) })
            ports = SessionPorts(inputs: registered.inputs, outputs: registered.outputs, addedLatencyFrames: 0,
                                 setsOwnRanges: client.hasLatencyHandler,
                                 portNamed: { [weak client] name in client?.port(named: name) })
        } catch {
            throw AudioSessionError(.resourceNotAvailable, error.description, cause: error)
        }
        let processor = RealtimeProcessor(client: client, inputs: ports.inputs, outputs: ports.outputs,
                                          costRecorder: cycleCostRecorder, render: renderBlock)
        processor.setSilencesInputs(silencesInputForPermission)
        activation.ports = ports
        activation.processor = processor
        do {
            try client.setProcessor(processor)
            try client.activate()
            StepTrace.note("activation: '\(client.name)' active, connecting")
        } catch {
            unregister(ports, on: client)
            throw AudioSessionError(.mediaServicesFailed, error.description, cause: error)
        }
        let plan = RoutePlanner.plan(request(prefs, inputs: inputCount, outputs: outputNames.count), catalog: catalog,
                                     history: history)
        let passesBefore = board.latencyPasses.load(ordering: .acquiring)
        do {
            try connect(ports, to: plan, on: client, tolerateMissingPorts: isReset)
        } catch {
            try? client.deactivate()
            unregister(ports, on: client)
            throw error
        }
        // Without the session's callback the pass is asked for once the connections run (`ActivationWait`).
        if ports.setsOwnRanges { client.recomputeLatencies() }
        StepTrace.note("activation: connected")
        return ActivationWait(attempt: attempt, client: client, latencyPassesBefore: passesBefore, period: requestedPeriod,
                              plan: plan, ports: ports, processor: processor, order: isReset ? nil : requestedAt)
    }

    /// Deactivates at the app's request (`isBusy` while an attached audio object runs).
    func deactivate() throws(AudioSessionError) {
        switch machine.deactivationRequested(audioObjectRunning: board.hasRunningAudioObject) {
        case .nothing:
            return
        case .refuseBusy:
            throw AudioSessionError(.isBusy, "an audio object attached to the session is still running; stop it "
                                        + "before deactivating the session")
        case .deactivate:
            try stopClient()
            machine.deactivated()
        }
    }

    /// Stops the client's processing and lets go of its ports (kept
    /// registered where the server needs that); the route becomes the one
    /// an activation would take.
    func stopClient() throws(AudioSessionError) {
        guard let client = activation.client else { return }
        do {
            try client.deactivate()
        } catch {
            throw AudioSessionError(.mediaServicesFailed, error.description, cause: error)
        }
        if let ports = activation.ports {
            if AudioSession.keepsPortsWhileInactive {
                activation.idlePorts = ports.inputs + ports.outputs
                activation.ports = nil
                activation.processor = nil
            } else {
                unregister(ports, on: client)
            }
        }
        // Inactive, the route is the one an activation would take (kept up to date by the timer).
        activation.plan = idlePlan()
    }

    func request(_ prefs: Preferences, inputs: Int, outputs: Int) -> RoutePlanner.Request {
        RoutePlanner.Request(category: prefs.category, options: prefs.options, outputOverride: prefs.outputOverride,
                             preferredInput: prefs.preferredInput, explicitInputs: prefs.inputPortNames,
                             explicitOutputs: prefs.outputPortNames, inputChannels: inputs, outputChannels: outputs,
                             inputDataSources: prefs.inputDataSources,
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

    /// The session's client; a new one is opened when there is none (which
    /// ends a loss: the machine says the reset).
    func openOrReuseClient() throws(AudioSessionError) -> Client {
        if let client = openClient, !client.isClosed { return client }
        guard let session else {
            throw AudioSessionError(.mediaServicesFailed, "the session was released while it activated")
        }
        let client = try session.makeClient()
        install(client)
        perform(machine.clientOpened(server: Self.format(of: client), at: .now))
        return client
    }

    /// Makes `client` the session's.
    func install(_ client: Client) {
        board.lastPeriod.store(client.bufferSize, ordering: .relaxed)
        board.lastSampleRate.store(client.sampleRate, ordering: .relaxed)
        activation.client = client
        activation.idlePorts = []
        let unsaid = ServerLimitation.found(on: client).filter { !limitationsSaid.contains($0) }
        limitationsSaid += unsaid
        for limitation in unsaid { hub.post(.serverLimitation(limitation)) }
        checkSampleRate()
    }

    /// Says when the server runs another rate than the preferred one, once
    /// for each pair of rates (again after a reset to a server at yet another).
    func checkSampleRate() {
        guard let preferred = preferences.sampleRate, let client = openClient else { return }
        let actual = Double(client.sampleRate)
        let mismatch = preferred == actual ? nil : SampleRateMismatch(preferredSampleRate: preferred, sampleRate: actual)
        guard mismatch != sampleRateMismatch else { return }
        sampleRateMismatch = mismatch
        if let mismatch { hub.post(.sampleRateMismatch(mismatch)) }
    }

    /// Reads the devices for an activation or an open; the first look sets
    /// the base of "last in wins".
    func lookAtDevices(on client: Client) {
        let catalog = DeviceCatalog(reading: client)
        if !machine.hasBeenActive && activation.history.inputs.isEmpty && activation.history.outputs.isEmpty {
            activation.history = DeviceHistory(catalog: catalog)
        } else {
            _ = activation.history.update(from: activation.catalog, to: catalog)
        }
        activation.catalog = catalog
    }

    /// Opens the client without activating: the session is published as
    /// inactive and follows the devices from now on.
    func open() throws(AudioSessionError) {
        let client = try openOrReuseClient()
        guard !isActive else { return }
        lookAtDevices(on: client)
        activation.plan = idlePlan()
        arbitrate()
    }

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
        // Routes leave devices the plan no longer names, and the ports the plan named before.
        let changes = ConnectionChanges(
            inputs: ports.inputs.map { ConnectionChanges.OwnPort(name: $0.name, connections: $0.connections) },
            outputs: ports.outputs.map { ConnectionChanges.OwnPort(name: $0.name, connections: $0.connections) },
            planInputs: plan.inputPorts, planOutputs: plan.outputPorts,
            routedBefore: Set(activation.plan.inputPorts + activation.plan.outputPorts.compactMap { $0 }),
            isPhysical: { client.port(named: $0)?.flags.contains(.physical) == true },
            exists: tolerateMissingPorts ? { client.port(named: $0) != nil } : nil)
        for connection in changes.drops { try? client.disconnect(connection.source, from: connection.destination) }
        for connection in changes.makes {
            do {
                try client.connect(connection.source, to: connection.destination)
            } catch {
                throw AudioSessionError(.resourceNotAvailable, error.description, cause: error)
            }
        }
        return changes.missing
    }

    func unregister(_ ports: SessionPorts, on client: Client) {
        for port in ports.inputs + ports.outputs { try? client.unregisterPort(port) }
        activation.ports = nil
        activation.processor = nil
    }


    /// Asks the server for the period nearest `seconds`; returns the frames
    /// asked for, or nil when no request was made (the server runs it already,
    /// or a non-mixable session has the say).
    @discardableResult
    func requestPeriod(for seconds: Double, on client: Client) throws(AudioSessionError) -> Int? {
        let request = PeriodRequest(duration: seconds, sampleRate: client.sampleRate, runningPeriod: client.bufferSize,
                                    isMixable: CategoryRules.isMixable(preferences.category, options: preferences.options),
                                    ownUUID: client.uuid, others: { publishedSessions(using: client) ?? [] })
        if case let .yielded(call) = request { StepTrace.note("period: not asked, '\(call)' does not mix") }
        guard let frames = request.frames else { return nil }
        do {
            try client.requestBufferSize(frames)
        } catch {
            throw AudioSessionError(.badParam, error.description, cause: error)
        }
        return frames
    }

    /// Waits, at most a second, until the server runs the period asked for
    /// (off the queue: see `ActivationWait.wait`), looking at each cycle's end.
    static func awaitPeriod(_ frames: Int, on client: Client, _ processor: RealtimeProcessor) {
        processor.awaitCycles(within: 1) { client.bufferSize == frames }
    }

    /// `incompatibleCategory` when `category` has no input (`input`) or no output.
    static func require(_ category: Category, input: Bool, _ what: String) throws(AudioSessionError) {
        guard input ? category.hasInput : category.hasOutput else {
            throw AudioSessionError(.incompatibleCategory, "\(what) needs an \(input ? "input" : "output"), and category "
                                        + "\(category.rawValue) has none")
        }
    }

    /// `require(_:input:_:)` for the session's category.
    func requireCategory(input: Bool, _ what: String) throws(AudioSessionError) {
        try Self.require(preferences.category, input: input, what)
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
