import JackKit

/// Routes: which devices the session's ports connect to, kept up to date as
/// devices come and go, and the multiRoute streams.
extension SessionCore {
    /// Re-reads the devices; when the route the rules choose has changed,
    /// reconnects and posts the route change with its reason.
    func refreshRoute(reason forcedReason: RouteChangeReason? = nil) {
        // Not on a client whose server went away: its close is coming on the
        // lifecycle lane, and libjack calls racing it crashed the 100-restart
        // test (rehearsal 28: WaitGraphChange's assertion). The reset refreshes.
        guard let client = openClient, !client.isClosed, !client.serverWentAway else { return }
        let catalog = DeviceCatalog(client: client)
        let change = activation.history.update(from: activation.catalog, to: catalog)
        activation.catalog = catalog
        let (history, active, ports, previous) = (activation.history, activation.isActive, activation.ports, activation.plan)
        guard active, let ports else { return }
        let prefs = preferences
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
        activation.plan = plan
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


    /// Prefers an input device; it must be one of the available inputs
    /// (`badParam` otherwise); nil clears the preference.
    func setPreferredInput(_ input: PortDescription?) throws(AudioSessionError) {
        if let input {
            let available = availableInputs
            guard available.contains(where: { $0.uid == input.uid }) else {
                throw AudioSessionError(.badParam, "'\(input.uid)' is not one of the available inputs ("
                                            + available.map(\.uid).joined(separator: ", ") + ")")
            }
        }
        preferences.preferredInput = input?.uid
        refreshRoute()
    }

    /// Sends playAndRecord output to the speaker or back to the rules.
    func overrideOutputAudioPort(_ override: PortOverride) throws(AudioSessionError) {
        let category = preferences.category
        guard category == .playAndRecord else {
            throw AudioSessionError(.badParam, "overriding the output port needs category playAndRecord, not \(category.rawValue)")
        }
        preferences.outputOverride = override
        refreshRoute(reason: .override)
    }

    /// The input devices on the server (empty under a category without input or without a client).
    var availableInputs: [PortDescription] {
        guard let client = openClient else { return [] }
        return RoutePlanner.availableInputs(DeviceCatalog(client: client), category: preferences.category)
    }

    /// The output devices, opening the session's client first if it is not open.
    func outputDevices() throws(AudioSessionError) -> [PortDescription] {
        RoutePlanner.availableOutputs(DeviceCatalog(client: try openOrReuseClient()), category: preferences.category)
    }

    /// The most channels the session could have each way: the named ports, or the route's devices.
    func routeMaxima() -> (inputs: Int, outputs: Int) {
        guard let client = openClient else { return (0, 0) }
        let catalog = DeviceCatalog(client: client)
        let history = activation.hasBeenActive ? activation.history : DeviceHistory(catalog: catalog)
        var prefs = preferences
        prefs.category = .playAndRecord
        let plan = RoutePlanner.plan(request(prefs, inputs: Int.max, outputs: Int.max), catalog: catalog, history: history)
        return (plan.inputPorts.count, plan.outputPorts.count)
    }
}
