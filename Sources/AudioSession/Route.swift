/// The kind of device a port stands for (AVAudioSession.Port), read from the
/// `urn:jackaudiosession:port-type` metadata on the hardware ports.
public enum AudioSessionPort: String, Sendable, Codable, CaseIterable {
    case builtInMic, lineIn, headsetMic, usbAudio, bluetoothHFP, carAudio
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

/// A device in a route (AVAudioSessionPortDescription): a group of JACK
/// hardware ports of one client.
public struct PortDescription: Sendable, Equatable, Codable {
    /// A readable name: the client's pretty-name metadata, else the client name.
    public let portName: String
    /// What kind of device it is.
    public let portType: AudioSessionPort
    /// A stable identifier: the JACK client name of the device.
    public let uid: String
    /// The device's channels in order.
    public let channels: [ChannelDescription]

    /// A device description.
    public init(portName: String, portType: AudioSessionPort, uid: String, channels: [ChannelDescription]) {
        self.portName = portName
        self.portType = portType
        self.uid = uid
        self.channels = channels
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
}

/// Why the route changed (AVAudioSession.RouteChangeReason, same raw values).
public enum RouteChangeReason: UInt, Sendable, Codable {
    case unknown = 0
    case newDeviceAvailable = 1
    case oldDeviceUnavailable = 2
    case categoryChange = 3
    case override = 4
    case wakeFromSleep = 6
    case noSuitableRouteForCategory = 7
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

/// What `overrideOutputAudioPort` may ask for.
public enum PortOverride: Sendable {
    /// Follow the route rules.
    case none
    /// Play through the built-in speaker (a device of type builtInSpeaker, else
    /// the server's `system` playback ports).
    case speaker
}
