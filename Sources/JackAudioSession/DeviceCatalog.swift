import JackKit

/// The hardware devices on a server: its physical ports grouped by client,
/// inputs (capture ports) and outputs (playback ports) apart, in the order the
/// server lists them.
struct DeviceCatalog: Equatable {
    var inputs: [PortDescription]
    var outputs: [PortDescription]

    static let empty = DeviceCatalog(inputs: [], outputs: [])

    /// Reads the devices from a server's ports (a `Client`: non-real-time).
    init(reading server: some PortDirectory) {
        inputs = Self.devices(server, ports: server.audioPortNames(flags: [.physical, .output]), fallback: .lineIn,
                              banksAsDataSources: true)
        outputs = Self.devices(server, ports: server.audioPortNames(flags: [.physical, .input]), fallback: .lineOut,
                               banksAsDataSources: false)
    }

    init(inputs: [PortDescription], outputs: [PortDescription]) {
        self.inputs = inputs
        self.outputs = outputs
    }

    /// Every JACK port of every device (each data source's too).
    var portNames: Set<String> {
        Set((inputs + outputs).flatMap { device in
            (device.dataSources?.flatMap(\.channels) ?? device.channels).map(\.jackPort)
        })
    }

    func input(_ uid: String) -> PortDescription? { inputs.first { $0.uid == uid } }
    func output(_ uid: String) -> PortDescription? { outputs.first { $0.uid == uid } }

    /// The device a JACK port belongs to, looked up in both directions (an
    /// input device with that port's data source selected).
    func device(containing port: String) -> PortDescription? {
        for device in inputs + outputs {
            if device.channels.contains(where: { $0.jackPort == port }) { return device }
            if let source = device.dataSources?.first(where: { $0.channels.contains { $0.jackPort == port } }) {
                return device.selecting(source.dataSourceName)
            }
        }
        return nil
    }

    /// Groups ports into devices: by client, and within a client by the
    /// JACK port-group metadata, else by the port-type metadata. A client
    /// with one group is one device whose uid is the client name. A client
    /// with several is, for inputs (`banksAsDataSources`), one device with a
    /// data source per group, the first selected; for outputs one device per
    /// group, uid `client/group`.
    private static func devices(_ server: any PortDirectory, ports: [String], fallback: AudioSessionPort,
                                banksAsDataSources: Bool) -> [PortDescription] {
        struct Group {
            var owner: String
            var label: String
            var type: AudioSessionPort?
            var ports: [String] = []
        }
        var groups: [Group] = []
        for port in ports {
            let owner = String(port.prefix { $0 != ":" })
            let uuid = server.portUUID(named: port)
            let group = uuid.flatMap { server.property(MetadataKey.portGroup, on: $0) }
            let typeName = uuid.flatMap { server.property(AudioSessionPort.metadataKey, on: $0) }
            let label = group ?? typeName ?? ""
            if let index = groups.firstIndex(where: { $0.owner == owner && $0.label == label }) {
                groups[index].ports.append(port)
            } else {
                groups.append(Group(owner: owner, label: label, type: typeName.flatMap(AudioSessionPort.init(rawValue:)),
                                    ports: [port]))
            }
        }
        var prettyNames: [String: String] = [:]
        func clientName(_ owner: String) -> String {
            if let known = prettyNames[owner] { return known }
            let pretty = server.clientUUID(named: owner).flatMap { server.property(MetadataKey.prettyName, on: $0) }
            let name = pretty?.isEmpty == false ? pretty! : owner
            prettyNames[owner] = name
            return name
        }
        func channels(_ ports: [String], named name: String) -> [ChannelDescription] {
            ports.enumerated().map { index, port in
                ChannelDescription(channelName: "\(name) \(index + 1)", channelNumber: index + 1, jackPort: port)
            }
        }
        func bankName(_ group: Group) -> String { group.label.isEmpty ? "ports" : group.label }
        if banksAsDataSources {
            var owners: [String] = []
            for group in groups where !owners.contains(group.owner) { owners.append(group.owner) }
            return owners.map { owner in
                let banks = groups.filter { $0.owner == owner }
                let name = clientName(owner)
                let type = banks[0].type ?? fallback
                guard banks.count > 1 else {
                    return PortDescription(portName: name, portType: type, uid: owner, channels: channels(banks[0].ports, named: name))
                }
                let sources = banks.enumerated().map { index, bank in
                    DataSourceDescription(dataSourceID: index + 1, dataSourceName: bankName(bank),
                                          channels: channels(bank.ports, named: "\(name) \(bankName(bank))"),
                                          traits: server.portUUID(named: bank.ports[0]).map {
                                              DataSourceTraits(readFrom: server, on: $0)
                                          } ?? DataSourceTraits())
                }
                return PortDescription(portName: name, portType: type, uid: owner, channels: sources[0].channels,
                                       dataSources: sources, selectedDataSource: sources[0])
            }
        }
        return groups.map { group in
            let split = groups.count { $0.owner == group.owner } > 1
            let name = split ? "\(clientName(group.owner)) \(bankName(group))" : clientName(group.owner)
            return PortDescription(portName: name, portType: group.type ?? fallback,
                                   uid: split ? "\(group.owner)/\(group.label)" : group.owner,
                                   channels: channels(group.ports, named: name))
        }
    }
}
