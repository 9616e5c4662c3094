import JackKit

/// Routes: which devices the session's ports connect to, kept up to date as
/// devices come and go, and the multiRoute streams.
extension SessionCore {
    /// Re-reads the devices; when the route the rules choose has changed,
    /// reconnects (while active) and posts the route change with its reason.
    /// An inactive session with an open client follows the devices too: its
    /// route is the one an activation would take, and it is told of changes,
    /// as the seeds tell inactive apps.
    func refreshRoute(reason forcedReason: RouteChangeReason? = nil) {
        // Not on a client whose server went away: its close is coming on the
        // lifecycle lane, and libjack calls racing it crashed the 100-restart
        // test (rehearsal 28: WaitGraphChange's assertion). The reset refreshes.
        guard let client = openClient, !client.isClosed, !client.serverWentAway else { return }
        // An activation waiting for JACK has its route planned: refreshed once it succeeds.
        guard machine.routeRefreshRequested() else { return }
        let catalog = DeviceCatalog(reading: client)
        let change = activation.history.update(from: activation.catalog, to: catalog)
        activation.catalog = catalog
        // "This change will only be in effect until the current route changes":
        // a device that comes or goes ends the speaker override.
        if forcedReason == nil, change.any, preferences.outputOverride == .speaker {
            preferences.outputOverride = .none
        }
        let prefs = preferences
        let previous = activation.plan
        let plan: RoutePlan
        let wanted: (inputs: Int, outputs: Int)
        var restored = 0
        if isActive, let ports = activation.ports {
            wanted = (ports.inputs.count, ports.outputs.count)
            plan = RoutePlanner.plan(request(prefs, inputs: wanted.inputs, outputs: wanted.outputs), catalog: catalog,
                                     history: activation.history)
            // Reconnect every time (idempotent): named ports may have come back.
            restored = (try? connect(ports, to: plan, on: client, tolerateMissingPorts: true)) ?? 0
        } else if !isActive {
            wanted = idleChannels()
            plan = idlePlan()
        } else {
            return
        }
        // The same route whose connections had to be made again: its ports
        // were made anew within one burst of registrations (a netjack2
        // slave's net driver does that when its master returns), or someone
        // else disconnected them. A configuration change of the same route.
        let remade = plan == previous && restored > 0
        guard plan != previous || forcedReason != nil || remade else { return }
        activation.plan = plan
        let devices = change.within(inputs: wanted.inputs > 0, outputs: wanted.outputs > 0)
        let reason: RouteChangeReason
        if let forcedReason {
            reason = forcedReason
        } else if (wanted.outputs > 0 && plan.route.outputs.isEmpty) || (wanted.inputs > 0 && plan.inputPorts.isEmpty) {
            // Only a direction the session has ports for: multiRoute on a
            // server without capture devices (PipeWire with sinks only) has none.
            reason = .noSuitableRouteForCategory
        } else if devices.appeared && !devices.vanished {
            reason = .newDeviceAvailable
        } else if devices.vanished {
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

    /// The channels an inactive session would ask for: its preferred counts
    /// (default 2) in the directions its category has.
    private func idleChannels() -> (inputs: Int, outputs: Int) {
        let prefs = preferences
        return (prefs.category.hasInput ? prefs.inputChannels ?? 2 : 0, prefs.category.hasOutput ? prefs.outputChannels ?? 2 : 0)
    }

    /// The route an activation would take now, for an inactive session.
    func idlePlan() -> RoutePlan {
        let wanted = idleChannels()
        return RoutePlanner.plan(request(preferences, inputs: wanted.inputs, outputs: wanted.outputs),
                                 catalog: activation.catalog, history: activation.history)
    }

    /// While inactive, JACK sends the client no registration callbacks (jack2
    /// calls them only for activated clients, `JackClient::ClientNotify`), so
    /// the arbitration timer compares the physical ports (read from shared
    /// memory, no server round trip) with the devices the route was planned
    /// on, and refreshes when they differ (after the debounce, in which a new
    /// device's metadata follows its ports).
    func watchDevicesWhileInactive() {
        guard !isActive, machine.attempt == nil, let client = openClient, !client.isClosed, !client.serverWentAway
        else { return }
        guard Set(client.portNames(flags: .physical)) != activation.catalog.portNames else { return }
        session?.scheduleRouteRefresh()
    }

    /// Chooses the current input device's data source; it must be one of
    /// `inputDataSources` (`badParam` otherwise). The route follows at once
    /// (`routeConfigurationChange`).
    func setInputDataSource(_ source: DataSourceDescription?) throws(AudioSessionError) {
        guard let device = activation.plan.route.inputs.first, device.dataSources != nil else {
            throw AudioSessionError(.badParam, "the current input has no data sources to choose from"
                                        + (activation.plan.route.inputs.first.map { " ('\($0.uid)' has one bank)" } ?? ""))
        }
        try setPreferredDataSource(source, of: device.uid)
    }

    /// Prefers a data source of input device `uid`, used whenever it is the
    /// input; it must be one of the device's (`badParam` otherwise).
    func setPreferredDataSource(_ source: DataSourceDescription?, of uid: String) throws(AudioSessionError) {
        let device = activation.plan.route.inputs.first { $0.uid == uid } ?? activation.catalog.input(uid)
        guard let device, let sources = device.dataSources else {
            throw AudioSessionError(.badParam, "'\(uid)' has no data sources to choose from (one bank, or not an input device)")
        }
        if let source {
            guard sources.contains(where: { $0.dataSourceName == source.dataSourceName }) else {
                throw AudioSessionError(.badParam, "'\(source.dataSourceName)' is not a data source of '\(device.uid)' ("
                                            + sources.map(\.dataSourceName).joined(separator: ", ") + ")")
            }
        }
        preferences.inputDataSources[device.uid] = source?.dataSourceName
        refreshRoute(reason: .routeConfigurationChange)
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
        return RoutePlanner.availableInputs(DeviceCatalog(reading: client), category: preferences.category,
                                            options: preferences.options)
    }

    /// The output devices, opening the session's client first if it is not open.
    func outputDevices() throws(AudioSessionError) -> [PortDescription] {
        RoutePlanner.availableOutputs(DeviceCatalog(reading: try openOrReuseClient()), category: preferences.category)
    }

    /// The most channels the session could have each way: the named ports, or the route's devices.
    func routeMaxima() -> (inputs: Int, outputs: Int) {
        guard let client = openClient else { return (0, 0) }
        let catalog = DeviceCatalog(reading: client)
        let history = machine.hasBeenActive ? activation.history : DeviceHistory(catalog: catalog)
        var prefs = preferences
        prefs.category = .playAndRecord
        let plan = RoutePlanner.plan(request(prefs, inputs: Int.max, outputs: Int.max), catalog: catalog, history: history)
        return (plan.inputPorts.count, plan.outputPorts.count)
    }
}
