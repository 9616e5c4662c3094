/// The kind of device a port stands for (AVAudioSession.Port), read from the
/// `urn:jackaudiosession:port-type` metadata on the hardware ports.
public enum AudioSessionPort: String, Sendable, Codable, CaseIterable {
    /// Input port types.
    case builtInMic, lineIn, headsetMic, usbAudio, bluetoothHFP, carAudio
    /// Output port types.
    case builtInSpeaker, builtInReceiver, headphones, lineOut, HDMI, bluetoothA2DP, bluetoothLE, airPlay

    /// The metadata key a device client sets on its ports to say what it is.
    public static let metadataKey = "urn:jackaudiosession:port-type"
}

/// One channel of a route's device: its number and the JACK port behind it.
public struct ChannelDescription: Sendable, Equatable, Codable {
    /// A readable name ("headphones 1").
    public let channelName: String
    /// 1-based channel number within the device.
    public let channelNumber: Int
    /// The full JACK port name (`client:port`).
    public let jackPort: String

    /// A channel description.
    public init(channelName: String, channelNumber: Int, jackPort: String) {
        self.channelName = channelName
        self.channelNumber = channelNumber
        self.jackPort = jackPort
    }
}

/// One of a device's selectable inputs (AVAudioSessionDataSourceDescription):
/// a bank of an interface's capture ports that shares one JACK port group
/// (`http://jackaudio.org/metadata/port-group`), e.g. its analogue inputs,
/// its ADAT inputs, its S/PDIF input, or one microphone of several. Where
/// it is, which way it faces and its polar patterns are what the device
/// sets in metadata (`DataSourceTraits`), nil when it says nothing.
public struct DataSourceDescription: Sendable, Equatable, Codable {
    /// Its number within the device, from 1, in the order the server lists the ports.
    public let dataSourceID: Int
    /// The port group's name.
    public let dataSourceName: String
    /// Its channels in order.
    public let channels: [ChannelDescription]
    /// What the device says about it.
    public let traits: DataSourceTraits
    var link = SessionLink()

    /// A data source description.
    public init(dataSourceID: Int, dataSourceName: String, channels: [ChannelDescription],
                traits: DataSourceTraits = DataSourceTraits()) {
        self.dataSourceID = dataSourceID
        self.dataSourceName = dataSourceName
        self.channels = channels
        self.traits = traits
    }

    private enum CodingKeys: String, CodingKey { case dataSourceID, dataSourceName, channels, traits }

    /// Where on the device it sits, if the device says.
    public var location: DataSourceLocation? { traits.location }
    /// Which way it faces, if the device says.
    public var orientation: DataSourceOrientation? { traits.orientation }
    /// The polar patterns it can switch between; nil when it cannot.
    public var supportedPolarPatterns: [PolarPattern]? { traits.supportedPolarPatterns }
    /// The polar pattern in use, if the device says.
    public var selectedPolarPattern: PolarPattern? { traits.selectedPolarPattern }
    /// The polar pattern a session asked the device for.
    public var preferredPolarPattern: PolarPattern? { traits.preferredPolarPattern }

    /// Asks the device for one of `supportedPolarPatterns` (`badParam` for
    /// any other, or when it has none; nil withdraws the wish). The wish is
    /// metadata on the source's ports; the device switches and says so in
    /// `selectedPolarPattern`, and the route follows with a route change of
    /// reason `routeConfigurationChange`. Works on a description read from a
    /// session (`availableInputs`, `currentRoute`, `inputDataSources`).
    public func setPreferredPolarPattern(_ pattern: PolarPattern?) throws(AudioSessionError) {
        try link.session(for: "data source '\(dataSourceName)'").setPreferredPolarPattern(pattern, of: self)
    }
}

/// A device in a route (AVAudioSessionPortDescription): a group of JACK
/// hardware ports of one client. An input device whose ports fall into
/// several JACK port groups has them as data sources, one selected at a time
/// (`channels` are the selected one's); output banks are devices of their
/// own instead (`client/group`), so multiRoute can send distinct streams to
/// them.
public struct PortDescription: Sendable, Equatable, Codable {
    /// A readable name: the client's pretty-name metadata, else the client name.
    public let portName: String
    /// What kind of device it is.
    public let portType: AudioSessionPort
    /// A stable identifier: the JACK client name of the device.
    public let uid: String
    /// The device's channels in order (of the selected data source, when it has them).
    public let channels: [ChannelDescription]
    /// Its selectable inputs; nil when it has one bank only (nothing to switch).
    public private(set) var dataSources: [DataSourceDescription]?
    /// The data source in use; nil when it has none.
    public private(set) var selectedDataSource: DataSourceDescription?
    var link = SessionLink()

    /// A device description.
    public init(portName: String, portType: AudioSessionPort, uid: String, channels: [ChannelDescription],
                dataSources: [DataSourceDescription]? = nil, selectedDataSource: DataSourceDescription? = nil) {
        self.portName = portName
        self.portType = portType
        self.uid = uid
        self.channels = channels
        self.dataSources = dataSources
        self.selectedDataSource = selectedDataSource
    }

    /// The device with the data source named `name` selected (itself when it
    /// has no such source, or `name` is nil).
    public func selecting(_ name: String?) -> PortDescription {
        guard let name, let source = dataSources?.first(where: { $0.dataSourceName == name }) else { return self }
        var selected = PortDescription(portName: portName, portType: portType, uid: uid, channels: source.channels,
                                       dataSources: dataSources, selectedDataSource: source)
        selected.link = link
        return selected
    }

    private enum CodingKeys: String, CodingKey {
        case portName, portType, uid, channels, dataSources, selectedDataSource
    }

    /// Prefers one of its `dataSources` for this input device (`badParam`
    /// for any other, or when it has none; nil: its first). It is used
    /// whenever the device is the session's input: at once when it is now,
    /// with a route change of reason `routeConfigurationChange`. Works on a
    /// description read from a session (`availableInputs`, `currentRoute`).
    public func setPreferredDataSource(_ source: DataSourceDescription?) throws(AudioSessionError) {
        try link.session(for: "device '\(uid)'").setPreferredDataSource(source, of: self)
    }

    /// The description, and its data sources, tied to `session`.
    func linked(to session: AudioSession) -> PortDescription {
        var linked = self
        let link = SessionLink(session: session)
        linked.link = link
        if let sources = dataSources {
            linked.dataSources = sources.map { var source = $0; source.link = link; return source }
        }
        if var source = selectedDataSource {
            source.link = link
            linked.selectedDataSource = source
        }
        return linked
    }
}

/// The devices a session's audio goes through (AVAudioSessionRouteDescription).
public struct RouteDescription: Sendable, Equatable, Codable {
    /// Where input comes from.
    public let inputs: [PortDescription]
    /// Where output goes.
    public let outputs: [PortDescription]

    /// A route with these devices.
    public init(inputs: [PortDescription] = [], outputs: [PortDescription] = []) {
        self.inputs = inputs
        self.outputs = outputs
    }

    /// The empty route.
    public static let empty = RouteDescription()

    /// The route with its devices tied to `session`.
    func linked(to session: AudioSession) -> RouteDescription {
        RouteDescription(inputs: inputs.map { $0.linked(to: session) }, outputs: outputs.map { $0.linked(to: session) })
    }
}

/// The session a description was read from, so the seeds' setters on
/// descriptions (`setPreferredDataSource`, `setPreferredPolarPattern`) reach
/// it. Not part of the value: descriptions compare and encode without it.
struct SessionLink: Sendable, Equatable {
    weak var session: AudioSession?

    static func == (_: SessionLink, _: SessionLink) -> Bool { true }

    func session(for what: String) throws(AudioSessionError) -> AudioSession {
        guard let session else {
            throw AudioSessionError(.badParam, "\(what) was not read from a session that still exists: "
                                        + "take it from availableInputs or currentRoute")
        }
        return session
    }
}

/// Why the route changed (AVAudioSession.RouteChangeReason, same raw values).
public enum RouteChangeReason: UInt, Sendable, Codable {
    /// The reason is not known.
    case unknown = 0
    /// A device appeared (hardware ports, or a connection to them).
    case newDeviceAvailable = 1
    /// The device in use went away.
    case oldDeviceUnavailable = 2
    /// The category changed.
    case categoryChange = 3
    /// The route was overridden (`overrideOutputAudioPort`).
    case override = 4
    /// The device woke from sleep (never posted here).
    case wakeFromSleep = 6
    /// No route suits the category: nothing to capture from or play to.
    case noSuitableRouteForCategory = 7
    /// The set of ports changed without a device appearing or going.
    case routeConfigurationChange = 8

    /// The name in lower camel case, as AVAudioSession spells it.
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .newDeviceAvailable: "newDeviceAvailable"
        case .oldDeviceUnavailable: "oldDeviceUnavailable"
        case .categoryChange: "categoryChange"
        case .override: "override"
        case .wakeFromSleep: "wakeFromSleep"
        case .noSuitableRouteForCategory: "noSuitableRouteForCategory"
        case .routeConfigurationChange: "routeConfigurationChange"
        }
    }
}

/// What `overrideOutputAudioPort` may ask for, with AVAudioSessionPortOverride's
/// raw values (None = 0, Speaker = 'spkr').
public enum PortOverride: UInt, Sendable {
    /// Follow the route rules.
    case none = 0
    /// Play through the built-in speaker (a device of type builtInSpeaker, else
    /// the server's `system` playback ports).
    case speaker = 0x7370_6B72
}
