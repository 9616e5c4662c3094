/// Which JACK ports a session's ports connect to, and the route that makes.
struct RoutePlan: Equatable {
    /// Ports feeding the session's inputs, channel order.
    var inputPorts: [String]
    /// Ports the session's outputs feed, channel order; nil where a
    /// stream's destination device is not on the server.
    var outputPorts: [String?]
    /// The devices those ports belong to (under multiRoute: every output device).
    var route: RouteDescription
    /// Under multiRoute, the streams whose destination is not on the server.
    var streamsWithoutDestination: [String] = []

    static let none = RoutePlan(inputPorts: [], outputPorts: [], route: .empty)
}

/// The order in which devices appeared, for "last in wins": the server's own
/// first device is the base; a device that appears while the session's client
/// is open goes on top; one that disappears leaves the stack.
struct DeviceHistory: Equatable {
    var inputs: [String] = []
    var outputs: [String] = []

    /// The history when the session first sees the server: its first devices.
    init(catalog: DeviceCatalog) {
        inputs = catalog.inputs.first.map { [$0.uid] } ?? []
        outputs = catalog.outputs.first.map { [$0.uid] } ?? []
    }

    /// Brings the history up to date; returns which devices appeared and vanished.
    mutating func update(from old: DeviceCatalog, to new: DeviceCatalog) -> DeviceChange {
        let change = DeviceChange(inputs: Self.difference(old.inputs.map(\.uid), new.inputs.map(\.uid)),
                                  outputs: Self.difference(old.outputs.map(\.uid), new.outputs.map(\.uid)))
        for device in new.inputs where !old.inputs.contains(where: { $0.uid == device.uid }) { inputs.append(device.uid) }
        for device in new.outputs where !old.outputs.contains(where: { $0.uid == device.uid }) { outputs.append(device.uid) }
        inputs.removeAll { uid in new.input(uid) == nil }
        outputs.removeAll { uid in new.output(uid) == nil }
        if inputs.isEmpty, let first = new.inputs.first { inputs = [first.uid] }
        if outputs.isEmpty, let first = new.outputs.first { outputs = [first.uid] }
        return change
    }

    private static func difference(_ old: [String], _ new: [String]) -> DeviceChange.Direction {
        DeviceChange.Direction(appeared: !Set(new).subtracting(old).isEmpty, vanished: !Set(old).subtracting(new).isEmpty)
    }
}

/// Which devices came and went between two looks at the server, per direction.
struct DeviceChange: Equatable {
    struct Direction: Equatable {
        var appeared = false
        var vanished = false
    }
    var inputs = Direction()
    var outputs = Direction()

    /// Any device, in either direction.
    var any: Bool { inputs.appeared || inputs.vanished || outputs.appeared || outputs.vanished }

    /// The change in the directions a session has ports for: a playback
    /// session's route has no input, so an input device's coming or going
    /// is no device of its route (a netjack2 slave's driver remakes capture
    /// and playback ports in separate bursts when its master returns).
    func within(inputs usesInputs: Bool, outputs usesOutputs: Bool) -> Direction {
        let used = [usesInputs ? inputs : nil, usesOutputs ? outputs : nil].compactMap { $0 }
        return Direction(appeared: used.contains { $0.appeared }, vanished: used.contains { $0.vanished })
    }
}

/// The session's routing rules, as a pure function of what is known.
enum RoutePlanner {
    struct Request {
        var category: Category
        /// The category's options: defaultToSpeaker and allowBluetooth change the route.
        var options: CategoryOptions = []
        var outputOverride: PortOverride
        var preferredInput: String?
        var explicitInputs: [String]
        var explicitOutputs: [String]
        var inputChannels: Int
        var outputChannels: Int
        /// The data source chosen per input device (uid → data source name).
        var inputDataSources: [String: String] = [:]
        /// Used only under multiRoute.
        var streams: [AudioOutputStream]
    }

    static func plan(_ request: Request, catalog allDevices: DeviceCatalog, history: DeviceHistory) -> RoutePlan {
        let catalog = usable(allDevices, category: request.category, options: request.options)
        var inputDevice: PortDescription?
        if request.category.hasInput && request.explicitInputs.isEmpty {
            if request.outputOverride == .speaker {
                // "Override the current inputs and outputs and route audio to the built-in speaker and microphone."
                inputDevice = catalog.inputs.first { $0.portType == .builtInMic } ?? catalog.input("system")
                    ?? catalog.inputs.first
            } else {
                inputDevice = request.preferredInput.flatMap(catalog.input)
                    ?? history.inputs.reversed().lazy.compactMap(catalog.input).first
                    ?? catalog.inputs.first
            }
            inputDevice = inputDevice.map { $0.selecting(request.inputDataSources[$0.uid]) }
        }
        let inputPorts = request.category.hasInput
            ? Array((request.explicitInputs.isEmpty ? inputDevice?.channels.map(\.jackPort) ?? [] : request.explicitInputs)
                .prefix(request.inputChannels))
            : []
        let inputs = if let inputDevice, !inputPorts.isEmpty { [inputDevice] } else {
            devices(for: inputPorts, catalog, fallback: .lineIn)
        }
        if request.category == .multiRoute {
            return multiroutePlan(request, inputPorts: inputPorts, inputs: inputs, catalog: catalog, history: history)
        }
        var outputDevice: PortDescription?
        if request.category.hasOutput && request.explicitOutputs.isEmpty {
            if request.outputOverride == .speaker {
                outputDevice = catalog.outputs.first { $0.portType == .builtInSpeaker }
                    ?? catalog.output("system") ?? catalog.outputs.first
            } else {
                outputDevice = history.outputs.reversed().lazy.compactMap(catalog.output).first
                    ?? catalog.outputs.first
                outputDevice = outputDevice.map { builtInOutput($0, request, catalog) }
            }
        }
        let outputPorts = request.category.hasOutput
            ? Array((request.explicitOutputs.isEmpty ? outputDevice?.channels.map(\.jackPort) ?? [] : request.explicitOutputs)
                .prefix(request.outputChannels))
            : []
        let route = RouteDescription(inputs: inputs, outputs: devices(for: outputPorts, catalog, fallback: .lineOut))
        return RoutePlan(inputPorts: inputPorts, outputPorts: outputPorts, route: route)
    }

    /// multiRoute: the route lists every output device, and nothing follows
    /// "last in wins". Each stream is bound to its own device's channels
    /// (unconnected while that device is away); without streams the outputs
    /// go to the server's first device, or the named ports.
    static func multiroutePlan(_ request: Request, inputPorts: [String], inputs: [PortDescription],
                               catalog: DeviceCatalog, history: DeviceHistory) -> RoutePlan {
        let outputs = multirouteOutputs(catalog)
        guard request.streams.isEmpty else {
            var outputPorts: [String?] = []
            var unplaced: [String] = []
            for stream in request.streams {
                let device = outputs.first { $0.uid == stream.destination }
                if device == nil { unplaced.append(stream.name) }
                outputPorts += stream.channels.map { channel in
                    device.flatMap { channel <= $0.channels.count ? $0.channels[channel - 1].jackPort : nil }
                }
            }
            return RoutePlan(inputPorts: inputPorts, outputPorts: outputPorts,
                             route: RouteDescription(inputs: inputs, outputs: outputs), streamsWithoutDestination: unplaced)
        }
        let base = history.outputs.first.flatMap(catalog.output) ?? outputs.first
        let ports = request.explicitOutputs.isEmpty ? base?.channels.map(\.jackPort) ?? [] : request.explicitOutputs
        return RoutePlan(inputPorts: inputPorts, outputPorts: Array(ports.prefix(request.outputChannels)),
                         route: RouteDescription(inputs: inputs, outputs: outputs))
    }

    /// The input devices a session of `category` may choose from.
    static func availableInputs(_ catalog: DeviceCatalog, category: Category, options: CategoryOptions) -> [PortDescription] {
        category.hasInput ? usable(catalog, category: category, options: options).inputs : []
    }

    /// The devices a session may use: Bluetooth hands-free devices only with
    /// allowBluetooth ("allows Bluetooth hands-free devices to appear as
    /// available input routes"), where the category takes that option; AirPlay
    /// devices under soloAmbient, ambient and playback ("support both the
    /// mirrored and non-mirrored versions of AirPlay"), and under
    /// playAndRecord only with allowAirPlay (its audio is the non-mirrored kind).
    static func usable(_ catalog: DeviceCatalog, category: Category, options: CategoryOptions) -> DeviceCatalog {
        var excluded: Set<AudioSessionPort> = []
        if [.record, .playAndRecord].contains(category), !options.contains(.allowBluetooth) { excluded.insert(.bluetoothHFP) }
        let airPlay = [.soloAmbient, .ambient, .playback].contains(category)
            || (category == .playAndRecord && options.contains(.allowAirPlay))
        if !airPlay { excluded.insert(.airPlay) }
        guard !excluded.isEmpty else { return catalog }
        return DeviceCatalog(inputs: catalog.inputs.filter { !excluded.contains($0.portType) },
                             outputs: catalog.outputs.filter { !excluded.contains($0.portType) })
    }

    /// When the route is the built-in one (no other device came since): a
    /// playAndRecord session plays through the receiver unless it asked for
    /// defaultToSpeaker ("By default, using this category implies that audio
    /// is routed to the receiver"), where the server has both.
    static func builtInOutput(_ chosen: PortDescription, _ request: Request, _ catalog: DeviceCatalog) -> PortDescription {
        let builtIn: Set<AudioSessionPort> = [.builtInSpeaker, .builtInReceiver]
        guard request.category == .playAndRecord, builtIn.contains(chosen.portType) else { return chosen }
        let wanted: AudioSessionPort = request.options.contains(.defaultToSpeaker) ? .builtInSpeaker : .builtInReceiver
        return catalog.outputs.first { $0.portType == wanted } ?? chosen
    }

    /// The output devices a session of `category` may play to (under multiRoute, `multirouteOutputs`).
    static func availableOutputs(_ catalog: DeviceCatalog, category: Category) -> [PortDescription] {
        category == .multiRoute ? multirouteOutputs(catalog) : catalog.outputs
    }

    /// The output devices multiRoute may use: all of them, except that the
    /// built-in speaker (and receiver) only count when no USB, HDMI or line
    /// output is there.
    static func multirouteOutputs(_ catalog: DeviceCatalog) -> [PortDescription] {
        let eligible: Set<AudioSessionPort> = [.usbAudio, .HDMI, .lineOut]
        guard catalog.outputs.contains(where: { eligible.contains($0.portType) }) else { return catalog.outputs }
        return catalog.outputs.filter { $0.portType != .builtInSpeaker && $0.portType != .builtInReceiver }
    }

    /// The devices behind `ports`, in order of first use.
    static func devices(for ports: [String?], _ catalog: DeviceCatalog, fallback: AudioSessionPort) -> [PortDescription] {
        var result: [PortDescription] = []
        for case let port? in ports {
            let device = catalog.device(containing: port) ?? {
                let owner = String(port.prefix { $0 != ":" })
                return PortDescription(portName: owner, portType: fallback, uid: owner,
                                       channels: [ChannelDescription(channelName: port, channelNumber: 1, jackPort: port)])
            }()
            if !result.contains(where: { $0.uid == device.uid }) { result.append(device) }
        }
        return result
    }
}
