import JackKit
import JackRuntime

/// One of a multiRoute session's distinct output streams: its own JACK ports,
/// connected only to chosen channels of one output device (the DJ's cue mix
/// to the headphones, the main mix to the room).
public struct AudioOutputStream: Sendable, Equatable, Codable {
    /// The stream's name; its ports are named after it.
    public let name: String
    /// The uid of the output device the stream plays to.
    public let destination: String
    /// The device's channels the stream plays to, 1-based, in the stream's channel order.
    public let channels: [Int]
    /// The short names of the stream's own JACK ports: `NAME` for one
    /// channel, `NAME_L`/`NAME_R` for two, `NAME_1`… for more.
    public let portNames: [String]
    /// Where the stream's buffers are in the render cycle's `outputs`
    /// (streams follow each other in the order they were made).
    public internal(set) var outputIndices: Range<Int>

    init(name: String, destination: String, channels: [Int], outputIndices: Range<Int>) {
        self.name = name
        self.destination = destination
        self.channels = channels
        portNames = Self.portNames(name, channels: channels.count)
        self.outputIndices = outputIndices
    }

    static func portNames(_ name: String, channels: Int) -> [String] {
        switch channels {
        case 1: [name]
        case 2: [name + "_L", name + "_R"]
        default: (1...channels).map { "\(name)_\($0)" }
        }
    }

    /// Checks a stream name: 1 to 32 letters, digits, `-`, `_` or `.`, and
    /// not the session's own `in_N`/`out_N` port names.
    static func checkName(_ name: String) throws(AudioSessionError) {
        let allowed = name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }
        guard (1...32).contains(name.count), allowed else {
            throw AudioSessionError(.badParam, "stream name '\(name)' must be 1 to 32 letters, digits, '-', '_' or '.'")
        }
        for prefix in ["in_", "out_"] where name.hasPrefix(prefix) && name.dropFirst(prefix.count).allSatisfy(\.isNumber) {
            throw AudioSessionError(.badParam, "stream name '\(name)' is taken by the session's own ports; choose another")
        }
    }
}

extension ProcessCycle {
    /// The output buffers of one stream this cycle: `cycle.outputs(in:
    /// stream.outputIndices)`, clamped to the outputs there are (empty for a
    /// stream made after this activation). Capture the range, not the
    /// stream, in the render block: the range is a plain value, the stream
    /// holds reference-counted strings. No allocation.
    @inlinable @inline(__always)
    public func outputs(in streamIndices: Range<Int>) -> UnsafeBufferPointer<UnsafeMutablePointer<Float>> {
        // Plain integers and pointers: a Slice or a generic Range method
        // would instantiate type metadata (which allocates) on first use in a debug build.
        let lower = Swift.min(Swift.max(streamIndices.lowerBound, 0), outputs.count)
        let upper = Swift.min(Swift.max(streamIndices.upperBound, lower), outputs.count)
        guard let base = outputs.baseAddress, upper > lower else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: base + lower, count: upper - lower)
    }
}

extension AudioSession {
    /// The output devices on the server, as the session's JACK client sees
    /// them (empty before it is open, like `availableInputs`; a getter never
    /// opens one: `outputDevices()` does). Under multiRoute these are the
    /// destinations streams may play to: the built-in speaker only when no
    /// USB, HDMI or line output is there (as on iOS).
    public var availableOutputs: [PortDescription] {
        guard let client = openClient else { return [] }
        return RoutePlanner.availableOutputs(DeviceCatalog(reading: client), category: category)
    }

    /// `availableOutputs`, opening the session's JACK client first if it is
    /// not open (`mediaServicesFailed` when the server cannot be reached).
    public func outputDevices() throws(AudioSessionError) -> [PortDescription] {
        try core.sync { core throws(AudioSessionError) in try core.outputDevices() }
    }

    /// The session's output streams, in the order of the render cycle's outputs.
    public var outputStreams: [AudioOutputStream] { board.read { $0.preferences.streams } }

    /// Makes an output stream named `name` playing to `channels` (1-based;
    /// nil: all) of the output device `destination`. Needs category
    /// multiRoute (`incompatibleCategory`); the device must be one of
    /// `availableOutputs` and no other stream may use those channels
    /// (`badParam`). Opens the JACK client if needed to see the devices.
    /// Like the render block, streams take effect at the next activation.
    @discardableResult
    public func outputStream(named name: String, to destination: PortDescription, channels: [Int]? = nil)
        throws(AudioSessionError) -> AudioOutputStream {
        try core.sync { core throws(AudioSessionError) in
            try core.addStream(named: name, to: destination, channels: channels)
        }
    }

    /// Makes an output stream named `name` playing to these JACK ports,
    /// which must all be channels of one output device (`badParam`
    /// otherwise, naming the devices they belong to).
    @discardableResult
    public func outputStream(named name: String, toPorts ports: [String]) throws(AudioSessionError) -> AudioOutputStream {
        try core.sync { core throws(AudioSessionError) in try core.addStream(named: name, toPorts: ports) }
    }

    /// Removes the stream named `name` (`badParam` if there is none); the
    /// streams after it move down in the render cycle's outputs. Takes effect
    /// at the next activation.
    public func removeOutputStream(named name: String) throws(AudioSessionError) {
        try core.sync { core throws(AudioSessionError) in try core.removeStream(named: name) }
    }

    /// The streams whose destination device is not on the server now (they
    /// are silent until it returns); empty while inactive.
    public var streamsWithoutDestination: [String] { board.read { $0.activation.plan.streamsWithoutDestination } }
}

/// The multiRoute streams, kept in the session's preferences.
extension SessionCore {
    func addStream(named name: String, toPorts ports: [String]) throws(AudioSessionError) -> AudioOutputStream {
        let outputs = try outputDevices()
        let owners = ports.map { port in outputs.first { $0.channels.contains { $0.jackPort == port } } }
        if let missing = zip(ports, owners).first(where: { $0.1 == nil })?.0 {
            throw AudioSessionError(.badParam, "'\(missing)' is not a channel of any available output on server "
                                        + "'\(serverName)' (" + outputs.map(\.uid).joined(separator: ", ") + ")")
        }
        let devices = owners.compactMap { $0 }
        guard let device = devices.first, devices.allSatisfy({ $0.uid == device.uid }) else {
            let owners = Set(devices.map(\.uid)).sorted().joined(separator: ", ")
            throw AudioSessionError(.badParam, "a stream plays to one device, but "
                                        + (ports.isEmpty ? "no ports were named" : "the ports belong to \(owners)"))
        }
        let channels = ports.compactMap { port in device.channels.first { $0.jackPort == port }?.channelNumber }
        return try addStream(named: name, to: device, channels: channels)
    }

    func addStream(named name: String, to destination: PortDescription, channels: [Int]?)
        throws(AudioSessionError) -> AudioOutputStream {
        let category = preferences.category
        guard category == .multiRoute else {
            throw AudioSessionError(.incompatibleCategory, "output streams need category multiRoute, not \(category.rawValue)")
        }
        try AudioOutputStream.checkName(name)
        let outputs = try outputDevices()
        guard let device = outputs.first(where: { $0.uid == destination.uid }) else {
            throw AudioSessionError(.badParam, "'\(destination.uid)' is not one of the available outputs on server "
                                        + "'\(serverName)' (" + outputs.map(\.uid).joined(separator: ", ") + ")")
        }
        let channels = channels ?? device.channels.map(\.channelNumber)
        guard !channels.isEmpty, Set(channels).count == channels.count,
              channels.allSatisfy({ (1...device.channels.count).contains($0) }) else {
            throw AudioSessionError(.badParam, "stream '\(name)': channels \(channels) must be distinct numbers from 1 to "
                                        + "\(device.channels.count), the channels of '\(device.uid)'")
        }
        if preferences.streams.contains(where: { $0.name == name }) {
            throw AudioSessionError(.badParam, "there is already a stream named '\(name)'")
        }
        for other in preferences.streams where other.destination == device.uid {
            if let shared = other.channels.first(where: channels.contains) {
                throw AudioSessionError(.badParam, "channel \(shared) of '\(device.uid)' already carries stream "
                                            + "'\(other.name)'; a stream plays only to its own channels")
            }
        }
        let start = preferences.streams.last?.outputIndices.upperBound ?? 0
        let stream = AudioOutputStream(name: name, destination: device.uid, channels: channels,
                                       outputIndices: start..<(start + channels.count))
        preferences.streams.append(stream)
        return stream
    }

    func removeStream(named name: String) throws(AudioSessionError) {
        guard let index = preferences.streams.firstIndex(where: { $0.name == name }) else {
            throw AudioSessionError(.badParam, "there is no stream named '\(name)' ("
                                        + preferences.streams.map(\.name).joined(separator: ", ") + ")")
        }
        var streams = preferences.streams
        streams.remove(at: index)
        var start = 0
        for position in streams.indices {
            let count = streams[position].channels.count
            streams[position].outputIndices = start..<(start + count)
            start += count
        }
        preferences.streams = streams
    }
}
