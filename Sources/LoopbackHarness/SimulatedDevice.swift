import Foundation
import JackAudioSession
import JackKit
import JackRuntime

/// A stand-in for a device being plugged in: a JACK client named after the
/// device with physical, terminal ports `NAME:playback_N` (inputs: what is
/// sent to the device) and `NAME:capture_N` (outputs: what the device hears),
/// its port type published as `urn:jackaudiosession:port-type` metadata.
/// By default it loops back what reached its playback ports one period later,
/// so a test can check what arrived. Like a hardware driver, it declares its
/// ports' latencies itself (`captureLatency`, `playbackLatency`, frames) and
/// does not pass latency through from playback to capture, so a session
/// looping through it sees no feedback. Unplugged when closed or when its process ends.
public final class SimulatedDevice: Sendable {
    /// The device's name: its JACK client name and route uid.
    public let name: String
    /// What kind of device it stands for.
    public let type: AudioSessionPort
    /// Channels in each direction.
    public let channels: Int
    let client: Client
    let loopback: DeviceLoopback

    /// Plugs the device into `serverName`. `banks`, when given, names the
    /// JACK port group of each channel (e.g. two "analogue" and two "adat"),
    /// as an interface with several input banks sets them; `traits` says,
    /// per bank name, where a bank (a microphone) sits, faces and which
    /// polar patterns it has. Like a device's bridge, it switches a bank to
    /// the polar pattern a session prefers when the bank supports it.
    /// `capturesOnly` makes a microphone: capture ports, silent, and no
    /// playback ports (an input device only).
    public init(name: String, serverName: String, type: AudioSessionPort, channels: Int = 2,
                prettyName: String? = nil, captureLatency: Int = 0, playbackLatency: Int = 0,
                banks: [String]? = nil, traits: [String: DataSourceTraits] = [:], capturesOnly: Bool = false) throws {
        precondition(channels >= 1, "a device has at least one channel")
        precondition(banks == nil || banks?.count == channels, "one bank name per channel")
        self.name = name
        self.type = type
        self.channels = channels
        client = try Client.checkedOpen(name: name, serverName: serverName)
        var playback: [JackKit.Port] = []
        var capture: [JackKit.Port] = []
        for channel in 1...channels {
            if !capturesOnly {
                playback.append(try client.registerPort("playback_\(channel)", flags: [.input, .physical, .terminal]))
            }
            capture.append(try client.registerPort("capture_\(channel)", flags: [.output, .physical, .terminal]))
        }
        // The port type is what makes it a device of its kind; a server that cannot keep it says why.
        if let limitation = ServerLimitation.found(on: client).first {
            client.close()
            throw limitation
        }
        for port in playback + capture {
            try client.setProperty(AudioSessionPort.metadataKey, value: type.rawValue, on: port.uuid)
        }
        for (bank, port) in zip(banks ?? [], capture) {
            try client.setProperty(MetadataKey.portGroup, value: bank, on: port.uuid)
            try traits[bank]?.write(to: client, on: port.uuid)
        }
        if !traits.isEmpty {
            let bankPorts = Dictionary(grouping: zip(banks ?? [], capture.map(\.uuid)), by: \.0).mapValues { $0.map(\.1) }
            try client.setEventHandler { [client] event in
                guard case let .propertyChange(subject, key, _) = event, key == DataSourceTraits.preferredPolarPatternKey,
                      let bank = bankPorts.first(where: { $0.value.contains(subject) }) else { return }
                // Not on libjack's notification thread: a metadata write from there waits on the server.
                DispatchQueue.global().async {
                    guard let wanted = client.property(key, on: subject).map(PolarPattern.init(rawValue:)),
                          traits[bank.key]?.supportedPolarPatterns?.contains(wanted) == true else { return }
                    for port in bank.value {
                        try? client.setProperty(DataSourceTraits.selectedPolarPatternKey, value: wanted.rawValue, on: port)
                    }
                }
            }
        }
        if let prettyName { try client.setProperty(MetadataKey.prettyName, value: prettyName, on: client.uuid) }
        let captureRange = LatencyRange(min: captureLatency, max: captureLatency)
        let playbackRange = LatencyRange(min: playbackLatency, max: playbackLatency)
        try client.setLatencyHandler { [capture, playback] mode in
            switch mode {
            case .capture: for port in capture { port.setLatencyRange(captureRange, .capture) }
            case .playback: for port in playback { port.setLatencyRange(playbackRange, .playback) }
            }
        }
        loopback = DeviceLoopback(channels: channels)
        try client.setProcessor(RealtimeProcessor(client: client, inputs: playback, outputs: capture,
                                                  render: loopback.renderBlock))
        try client.activate()
    }

    /// Unplugs the device: its ports disappear from the server.
    public func unplug() { client.close() }

    deinit { client.close() }
}

/// The device's real-time work: each capture port sends what its playback
/// port received one cycle earlier (silence, without one).
final class DeviceLoopback: @unchecked Sendable { // its held samples belong to the device's real-time thread
    let held: UnsafeMutableBufferPointer<Float>
    let channels: Int

    init(channels: Int) {
        self.channels = channels
        held = .allocate(capacity: channels * JackPeriod.maximumFrames)
        held.initialize(repeating: 0)
    }

    deinit { held.deallocate() }

    var renderBlock: RenderBlock { { cycle in self.process(cycle) } }

    @_noAllocation @_noLocks
    func process(_ cycle: ProcessCycle) {
        let frames = min(cycle.frameCount, JackPeriod.maximumFrames)
        let count = min(channels, min(cycle.inputs.count, cycle.outputs.count))
        var channel = 0
        while channel < count {
            let store = held.baseAddress! + channel * JackPeriod.maximumFrames
            let input = cycle.inputs[channel]
            let output = cycle.outputs[channel]
            var frame = 0
            while frame < frames {
                output[frame] = store[frame]
                store[frame] = input[frame]
                frame += 1
            }
            channel += 1
        }
        while channel < cycle.outputs.count {
            let output = cycle.outputs[channel]
            var frame = 0
            while frame < frames {
                output[frame] = 0
                frame += 1
            }
            channel += 1
        }
    }
}
