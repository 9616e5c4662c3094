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

    /// Groups ports into devices: by client, and within a client by the
    /// JACK port-group metadata, else by the port-type metadata. A client
    /// with one group is one device whose uid is the client name; a client
    /// with several has one device per group, uid `client/group`.
    private static func devices(_ client: Client, ports: [String], fallback: AudioSessionPort) -> [PortDescription] {
        struct Group {
            var owner: String
            var label: String
            var type: AudioSessionPort?
            var ports: [String] = []
        }
        var groups: [Group] = []
        for port in ports {
            let owner = String(port.prefix { $0 != ":" })
            let uuid = client.port(named: port)?.uuid
            let group = uuid.flatMap { client.property(MetadataKey.portGroup, on: $0) }
            let typeName = uuid.flatMap { client.property(AudioSessionPort.metadataKey, on: $0) }
            let label = group ?? typeName ?? ""
            if let index = groups.firstIndex(where: { $0.owner == owner && $0.label == label }) {
                groups[index].ports.append(port)
            } else {
                groups.append(Group(owner: owner, label: label, type: typeName.flatMap(AudioSessionPort.init(rawValue:)),
                                    ports: [port]))
            }
        }
        var prettyNames: [String: String] = [:]
        return groups.map { group in
            let split = groups.count { $0.owner == group.owner } > 1
            let clientName = prettyNames[group.owner] ?? {
                let pretty = client.uuid(ofClient: group.owner).flatMap { client.property(MetadataKey.prettyName, on: $0) }
                let name = pretty?.isEmpty == false ? pretty! : group.owner
                prettyNames[group.owner] = name
                return name
            }()
            let name = split ? "\(clientName) \(group.label.isEmpty ? "ports" : group.label)" : clientName
            let channels = group.ports.enumerated().map { index, port in
                ChannelDescription(channelName: "\(name) \(index + 1)", channelNumber: index + 1, jackPort: port)
            }
            return PortDescription(portName: name, portType: group.type ?? fallback,
                                   uid: split ? "\(group.owner)/\(group.label)" : group.owner, channels: channels)
        }
    }
}
