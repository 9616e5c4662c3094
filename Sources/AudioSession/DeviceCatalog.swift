import JackKit

/// The hardware devices on a server: its physical ports grouped by client,
/// inputs (capture ports) and outputs (playback ports) apart, in the order the
/// server lists them.
struct DeviceCatalog: Equatable {
    var inputs: [PortDescription]
    var outputs: [PortDescription]

    static let empty = DeviceCatalog(inputs: [], outputs: [])

    /// Reads the devices from the server. Non-real-time.
    init(client: Client) {
        inputs = Self.devices(client, ports: client.portNames(flags: [.physical, .output]), fallback: .lineIn)
        outputs = Self.devices(client, ports: client.portNames(flags: [.physical, .input]), fallback: .lineOut)
    }

    init(inputs: [PortDescription], outputs: [PortDescription]) {
        self.inputs = inputs
        self.outputs = outputs
    }

    func input(_ uid: String) -> PortDescription? { inputs.first { $0.uid == uid } }
    func output(_ uid: String) -> PortDescription? { outputs.first { $0.uid == uid } }

    /// The device a JACK port belongs to, looked up in both directions.
    func device(containing port: String) -> PortDescription? {
        (inputs + outputs).first { $0.channels.contains { $0.jackPort == port } }
    }

    private static func devices(_ client: Client, ports: [String], fallback: AudioSessionPort) -> [PortDescription] {
        var order: [String] = []
        var grouped: [String: [String]] = [:]
        for port in ports {
            let owner = String(port.prefix { $0 != ":" })
            if grouped[owner] == nil { order.append(owner) }
            grouped[owner, default: []].append(port)
        }
        return order.map { owner in
            let ports = grouped[owner]!
            let first = client.port(named: ports[0])
            let typeName = first.flatMap { client.property(AudioSessionPort.metadataKey, on: $0.uuid) }
            let type = typeName.flatMap(AudioSessionPort.init(rawValue:)) ?? fallback
            let clientUUID = client.uuid(ofClient: owner)
            let pretty = clientUUID.flatMap { client.property(MetadataKey.prettyName, on: $0) }
            let name = (pretty?.isEmpty == false ? pretty! : owner)
            let channels = ports.enumerated().map { index, port in
                ChannelDescription(channelName: "\(name) \(index + 1)", channelNumber: index + 1, jackPort: port)
            }
            return PortDescription(portName: name, portType: type, uid: owner, channels: channels)
        }
    }
}
