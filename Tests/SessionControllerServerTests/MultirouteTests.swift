import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
import Measurement
import XCTest

/// Plays a seeded test signal into each output stream: stream `s` sends
/// `TestSignal(seed: seeds[s])`, channel `c` of the stream on its channel `c`.
/// The layout is copied into plain memory, so the real-time code touches no
/// reference-counted value.
final class SeededStreams: @unchecked Sendable {
    let layout: UnsafeMutableBufferPointer<(indices: Range<Int>, signal: TestSignal)>

    init(_ streams: [AudioOutputStream], seeds: [UInt64]) {
        layout = .allocate(capacity: streams.count)
        _ = layout.initialize(from: zip(streams, seeds).map { ($0.outputIndices, TestSignal(seed: $1)) })
    }

    deinit { layout.deallocate() }

    var renderBlock: RenderBlock { { cycle in self.process(cycle) } }

    @_noAllocation @_noLocks
    func process(_ cycle: ProcessCycle) {
        let start = cycle.cycleStartFrame
        var stream = 0
        while stream < layout.count {
            let buffers = cycle.outputs(in: layout[stream].indices)
            let signal = layout[stream].signal
            var channel = 0
            while channel < buffers.count {
                var frame = 0
                while frame < cycle.frameCount {
                    buffers[channel][frame] = signal.sample(channel: channel, frame: start &+ UInt32(frame))
                    frame += 1
                }
                channel += 1
            }
            stream += 1
        }
    }
}

/// The multiRoute category on a real jackd with simulated devices: distinct
/// streams to distinct devices, devices coming and going, the single input
/// device, and "last in wins" for the other categories.
final class MultirouteTests: JackTestCase {
    /// Headphones, HDMI and a line output, as the seeds' valid combinations have them.
    private func plugThreeDevices(_ server: LoopbackServer) throws -> [SimulatedDevice] {
        [try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones),
         try SimulatedDevice(name: "hdmi", serverName: server.name, type: .HDMI),
         try SimulatedDevice(name: "lineout", serverName: server.name, type: .lineOut)]
    }

    private func device(_ uid: String, of session: AudioSession) throws -> PortDescription {
        let outputs = try session.outputDevices()
        return try XCTUnwrap(outputs.first { $0.uid == uid }, "\(outputs.map(\.uid))")
    }

    func testFourStreamsEachReachOnlyTheirOwnDestinationBitExact() throws {
        // Synchronous, so every client runs in every cycle (an async server
        // may skip a late client's cycle, which is scheduling, not routing).
        let server = try startServer(period: 128, serverArguments: ["-S"])
        let devices = try plugThreeDevices(server)
        defer { devices.forEach { $0.unplug() } }
        let session = AudioSession(clientName: "dj", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.multiRoute)
        let main = try session.outputStream(named: "main", to: device("lineout", of: session))
        let cue = try session.outputStream(named: "cue", to: device("headphones", of: session), channels: [1, 2])
        let tv = try session.outputStream(named: "tv", to: device("hdmi", of: session), channels: [1])
        let announce = try session.outputStream(named: "announce", to: device("hdmi", of: session), channels: [2])
        XCTAssertEqual(cue.portNames, ["cue_L", "cue_R"])
        XCTAssertEqual(tv.portNames, ["tv"])
        XCTAssertEqual([main, cue, tv, announce].map(\.outputIndices), [0..<2, 2..<4, 4..<5, 5..<6])
        let seeds: [UInt64] = [11, 22, 33, 44]
        let player = SeededStreams([main, cue, tv, announce], seeds: seeds)
        session.setRenderBlock(player.renderBlock)
        try session.setActive(true)

        // Every output device is in the route, and each stream port goes to its destination only.
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["system", "loopback", "headphones", "hdmi", "lineout"])
        XCTAssertEqual(session.currentRoute.outputs.map(\.portType), [.lineOut, .lineOut, .headphones, .HDMI, .lineOut])
        XCTAssertEqual(session.outputPortNames,
                       ["dj:main_L", "dj:main_R", "dj:cue_L", "dj:cue_R", "dj:tv", "dj:announce"])
        let client = try XCTUnwrap(session.client)
        let expectedConnections = [
            "dj:main_L": ["lineout:playback_1"], "dj:main_R": ["lineout:playback_2"],
            "dj:cue_L": ["headphones:playback_1"], "dj:cue_R": ["headphones:playback_2"],
            "dj:tv": ["hdmi:playback_1"], "dj:announce": ["hdmi:playback_2"],
        ]
        for (port, connections) in expectedConnections {
            XCTAssertEqual(client.port(named: port)?.connections, connections, port)
        }
        for port in ["system:playback_1", "system:playback_2", "loopback:playback_1"] {
            assertEventuallyEqual(client.port(named: port)?.connections, [], "nothing may reach \(port)")
        }

        // What each device hears, one period later on its capture ports.
        let destinations: [(port: String, seed: UInt64, channel: Int)] = [
            ("lineout:capture_1", 11, 0), ("lineout:capture_2", 11, 1),
            ("headphones:capture_1", 22, 0), ("headphones:capture_2", 22, 1),
            ("hdmi:capture_1", 33, 0), ("hdmi:capture_2", 44, 0),
        ]
        let capture = try PortCapture(serverName: server.name, sources: destinations.map(\.port), period: 128,
                                      cycles: 750)
        // From a few cycles on, every device carries its stream (one period through each).
        let cycles = session.cyclesCompleted
        XCTAssertTrue(waitUntil { session.cyclesCompleted > cycles + 8 })
        capture.arm()
        XCTAssertTrue(capture.waitUntilFull())
        for (channel, destination) in destinations.enumerated() {
            let signal = TestSignal(seed: destination.seed)
            let comparison = capture.compare(channel: channel, maximumDelay: 4 * 128) {
                signal.sample(channel: destination.channel, frame: $0)
            }
            XCTAssertNotNil(comparison.delayFrames, "\(destination.port): \(comparison)")
            XCTAssertEqual(comparison.mismatches, 0, "\(destination.port): \(comparison)")
            XCTAssertEqual(comparison.compared, 750 * 128)
            // The comparison can fail: another stream's signal does not fit here.
            let other = TestSignal(seed: destination.seed == 11 ? 22 : 11)
            let wrong = capture.compare(channel: channel, maximumDelay: 4 * 128) {
                other.sample(channel: destination.channel, frame: $0)
            }
            XCTAssertNil(wrong.delayFrames, "\(destination.port) also fits another stream's signal")
        }
    }

    func testDevicesComeAndGoWithoutMovingStreams() throws {
        let server = try startServer()
        let lineout = try SimulatedDevice(name: "lineout", serverName: server.name, type: .lineOut)
        defer { lineout.unplug() }
        var headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        defer { headphones.unplug() }
        let session = AudioSession(clientName: "dj", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.multiRoute)
        let main = try session.outputStream(named: "main", to: device("lineout", of: session))
        let cue = try session.outputStream(named: "cue", to: device("headphones", of: session))
        let player = SeededStreams([main, cue], seeds: [1, 2])
        session.setRenderBlock(player.renderBlock)
        try session.setActive(true)
        let recorder = EventRecorder(session)
        let client = try XCTUnwrap(session.client)
        let mainConnections = ["dj:main_L": ["lineout:playback_1"], "dj:main_R": ["lineout:playback_2"]]
        func assertMainUntouched(_ when: String) {
            for (port, connections) in mainConnections {
                XCTAssertEqual(client.port(named: port)?.connections, connections, "\(port) \(when)")
            }
        }

        // A new device: listed, and no stream moves to it.
        let hdmi = try SimulatedDevice(name: "hdmi", serverName: server.name, type: .HDMI)
        defer { hdmi.unplug() }
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.count == 1 }, "\(recorder.events)")
        let plugged = try XCTUnwrap(recorder.laterRouteChanges.last)
        XCTAssertEqual(plugged.reason, .newDeviceAvailable)
        XCTAssertEqual(plugged.streams, [])
        XCTAssertEqual(plugged.current.outputs.map(\.uid), ["system", "loopback", "lineout", "headphones", "hdmi"])
        XCTAssertEqual(plugged.previous.outputs.map(\.uid), ["system", "loopback", "lineout", "headphones"])
        assertEventuallyEqual(client.port(named: "dj:cue_L")?.connections, ["headphones:playback_1"])
        assertEventuallyEqual(client.port(named: "hdmi:playback_1")?.connections, [])
        assertMainUntouched("after HDMI was plugged")

        // The cue stream's destination goes: reported with the stream named, not re-routed.
        headphones.unplug()
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.count == 2 }, "\(recorder.events)")
        let unplugged = try XCTUnwrap(recorder.laterRouteChanges.last)
        XCTAssertEqual(unplugged.reason, .oldDeviceUnavailable)
        XCTAssertEqual(unplugged.streams, ["cue"])
        XCTAssertFalse(unplugged.current.outputs.contains { $0.uid == "headphones" })
        XCTAssertEqual(session.streamsWithoutDestination, ["cue"])
        assertEventuallyEqual(client.port(named: "dj:cue_L")?.connections, [])
        assertEventuallyEqual(client.port(named: "dj:cue_R")?.connections, [])
        for port in ["system:playback_1", "loopback:playback_1", "hdmi:playback_1"] {
            XCTAssertEqual(client.port(named: port)?.connections, [], "cue must not be re-routed to \(port)")
        }
        assertMainUntouched("after the headphones went")
        // Other processes see it too, in the published state.
        XCTAssertTrue(waitUntil {
            session.publishedSessions().first { $0.state.client == "dj" }?.state.streams?.first { $0.name == "cue" }?.connected == false
        })

        // The same device returns: the stream is reconnected and the audio flows again.
        headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.count == 3 }, "\(recorder.events)")
        let returned = try XCTUnwrap(recorder.laterRouteChanges.last)
        XCTAssertEqual(returned.reason, .newDeviceAvailable)
        XCTAssertEqual(returned.streams, ["cue"])
        XCTAssertEqual(session.streamsWithoutDestination, [])
        XCTAssertEqual(client.port(named: "dj:cue_L")?.connections, ["headphones:playback_1"])
        assertMainUntouched("after the headphones came back")
        let probe = try LevelProbe(serverName: server.name, listeningTo: ["headphones:capture_1", "headphones:capture_2"])
        XCTAssertTrue(waitUntil { probe.levels(over: 0.1).allSatisfy { $0 > -20 } }, "\(probe.levels(over: 0.1))")
    }

    func testOneDeviceAloneAndUSBWithHeadphones() throws {
        let server = try startServer(loopbackChannels: 0)
        let session = AudioSession(clientName: "dj", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.multiRoute)
        // Only the server's own device: the category works with that one.
        let main = try session.outputStream(named: "main", to: device("system", of: session))
        try session.setActive(true)
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["system"])
        XCTAssertEqual(session.client?.port(named: "dj:main_L")?.connections, ["system:playback_1"])

        // USB and headphones, one of the seeds' combinations, next to it.
        let usb = try SimulatedDevice(name: "usb", serverName: server.name, type: .usbAudio, channels: 4)
        defer { usb.unplug() }
        let headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        defer { headphones.unplug() }
        XCTAssertTrue(waitUntil { session.currentRoute.outputs.count == 3 }, "\(session.currentRoute.outputs.map(\.uid))")
        try session.setActive(false)
        try session.outputStream(named: "deck", to: device("usb", of: session), channels: [3, 4])
        try session.outputStream(named: "cue", to: device("headphones", of: session))
        try session.setActive(true)
        let client = try XCTUnwrap(session.client)
        XCTAssertEqual(client.port(named: "dj:main_L")?.connections, ["system:playback_1"])
        XCTAssertEqual(client.port(named: "dj:deck_L")?.connections, ["usb:playback_3"])
        XCTAssertEqual(client.port(named: "dj:deck_R")?.connections, ["usb:playback_4"])
        XCTAssertEqual(client.port(named: "dj:cue_R")?.connections, ["headphones:playback_2"])
        XCTAssertEqual(client.port(named: "usb:playback_1")?.connections, [])
        XCTAssertEqual(session.outputStreams.map(\.outputIndices), [main.outputIndices, 2..<4, 4..<6])
    }

    func testStreamRules() throws {
        let server = try startServer()
        let devices = try plugThreeDevices(server)
        defer { devices.forEach { $0.unplug() } }
        let session = AudioSession(clientName: "dj", serverName: server.name)
        defer { session.close() }
        func code(_ body: () throws -> Void) -> AudioSessionError.Code? {
            do { try body() } catch { return (error as? AudioSessionError)?.sessionCode }
            return nil
        }
        try session.setCategory(.playback)
        let headphones = try device("headphones", of: session)
        XCTAssertEqual(code { try session.outputStream(named: "cue", to: headphones) }, .incompatibleCategory)

        try session.setCategory(.multiRoute)
        let bogus = PortDescription(portName: "nothing", portType: .usbAudio, uid: "nothing", channels: [])
        XCTAssertEqual(code { try session.outputStream(named: "cue", to: bogus) }, .badParam)
        XCTAssertEqual(code { try session.outputStream(named: "cue", to: headphones, channels: [3]) }, .badParam)
        XCTAssertEqual(code { try session.outputStream(named: "cue", to: headphones, channels: [1, 1]) }, .badParam)
        XCTAssertEqual(code { try session.outputStream(named: "cue", to: headphones, channels: []) }, .badParam)
        XCTAssertEqual(code { try session.outputStream(named: "out_1", to: headphones) }, .badParam)
        XCTAssertEqual(code { try session.outputStream(named: "cue:L", to: headphones) }, .badParam)
        try session.outputStream(named: "left", to: headphones, channels: [1])
        XCTAssertEqual(code { try session.outputStream(named: "both", to: headphones) }, .badParam,
                       "channel 1 already carries 'left'")
        XCTAssertEqual(code { try session.outputStream(named: "left", to: try self.device("hdmi", of: session)) }, .badParam)
        try session.outputStream(named: "right", to: headphones, channels: [2])
        try session.outputStream(named: "room", to: try device("hdmi", of: session))
        XCTAssertEqual(session.outputStreams.map(\.outputIndices), [0..<1, 1..<2, 2..<4])
        try session.removeOutputStream(named: "left")
        XCTAssertEqual(session.outputStreams.map(\.name), ["right", "room"])
        XCTAssertEqual(session.outputStreams.map(\.outputIndices), [0..<1, 1..<3])
        XCTAssertEqual(code { try session.removeOutputStream(named: "left") }, .badParam)

        // The one-to-one-channel DJ split: left and right headphone apart, HDMI whole.
        try session.outputStream(named: "left", to: headphones, channels: [1])
        try session.setActive(true)
        XCTAssertEqual(session.outputPortNames, ["dj:right", "dj:room_L", "dj:room_R", "dj:left"])
        XCTAssertEqual(session.client?.port(named: "dj:left")?.connections, ["headphones:playback_1"])
        XCTAssertEqual(session.client?.port(named: "dj:right")?.connections, ["headphones:playback_2"])
        XCTAssertEqual(session.outputNumberOfChannels, 4)
    }

    func testMultirouteTakesInputFromOneDeviceOnly() throws {
        let server = try startServer()
        let microphone = try SimulatedDevice(name: "usbmic", serverName: server.name, type: .usbAudio, channels: 1)
        defer { microphone.unplug() }
        let session = AudioSession(clientName: "dj", serverName: server.name, recordConsent: .givenByCaller)
        defer { session.close() }
        try session.setCategory(.multiRoute)
        session.setPreferredInputPortNames(["system:capture_1", "usbmic:capture_1"])
        try session.setPreferredInputNumberOfChannels(2)
        XCTAssertThrowsError(try session.setActive(true)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .badParam)
            XCTAssertTrue("\(error)".contains("single device"), "\(error)")
        }
        XCTAssertFalse(session.isActive)

        session.setPreferredInputPortNames([])
        try session.setPreferredInputNumberOfChannels(1)
        try session.setPreferredInput(try XCTUnwrap(session.availableInputs?.first { $0.uid == "usbmic" }))
        try session.setActive(true)
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["usbmic"])
        XCTAssertEqual(session.client?.port(named: "dj:in_1")?.connections, ["usbmic:capture_1"])
        // Without streams the outputs stay on the server's own device, whatever is plugged later.
        XCTAssertEqual(session.client?.port(named: "dj:out_1")?.connections, ["system:playback_1"])
        let recorder = EventRecorder(session)
        let headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        defer { headphones.unplug() }
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.contains { $0.reason == .newDeviceAvailable } })
        XCTAssertEqual(session.client?.port(named: "dj:out_1")?.connections, ["system:playback_1"])
        XCTAssertTrue(session.currentRoute.outputs.contains { $0.uid == "headphones" })
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["usbmic"], "the preferred input stays")
    }

    func testPortGroupsAndTheBuiltInSpeakerRule() throws {
        let server = try startServer(loopbackChannels: 4)
        let speaker = try SimulatedDevice(name: "speaker", serverName: server.name, type: .builtInSpeaker)
        defer { speaker.unplug() }
        let session = AudioSession(clientName: "dj", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.multiRoute)
        XCTAssertTrue(session.availableOutputs.isEmpty, "a getter never opens a JACK client")
        XCTAssertNil(session.client)
        try session.setActive(true)
        let client = try XCTUnwrap(session.client)
        // The built-in speaker only counts when no USB, HDMI or line output is there.
        XCTAssertEqual(session.availableOutputs.map(\.uid), ["system", "loopback"])
        // One client's ports split into two devices by JACK's port-group metadata.
        for (index, group) in ["monitors", "monitors", "booth", "booth"].enumerated() {
            let port = try XCTUnwrap(client.port(named: "loopback:playback_\(index + 1)"))
            try client.setProperty(MetadataKey.portGroup, value: group, on: port.uuid)
        }
        let outputs = session.availableOutputs
        XCTAssertEqual(outputs.map(\.uid), ["system", "loopback/monitors", "loopback/booth"])
        XCTAssertEqual(outputs.last?.channels.map(\.jackPort), ["loopback:playback_3", "loopback:playback_4"])
        XCTAssertEqual(outputs.last?.channels.map(\.channelNumber), [1, 2])
        try session.setCategory(.playback)
        XCTAssertTrue(session.availableOutputs.contains { $0.uid == "speaker" }, "other categories may use it")
    }

    func testLastInWinsForPlayAndRecord() throws {
        let server = try startServer()
        let session = AudioSession(clientName: "caller", serverName: server.name, recordConsent: .givenByCaller)
        defer { session.close() }
        try session.setCategory(.playAndRecord)
        try session.setActive(true)
        let recorder = EventRecorder(session)
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["system"])
        let hdmi = try SimulatedDevice(name: "hdmi", serverName: server.name, type: .HDMI)
        defer { hdmi.unplug() }
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.count == 1 }, "\(recorder.events)")
        let headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.count == 2 }, "\(recorder.events)")
        XCTAssertEqual(recorder.laterRouteChanges.map(\.reason), [.newDeviceAvailable, .newDeviceAvailable])
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["headphones"], "the last one in wins")
        XCTAssertEqual(session.client?.port(named: "caller:out_1")?.connections, ["headphones:playback_1"])
        headphones.unplug()
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.count == 3 }, "\(recorder.events)")
        let unplugged = try XCTUnwrap(recorder.laterRouteChanges.last)
        XCTAssertEqual(unplugged.reason, .oldDeviceUnavailable)
        XCTAssertEqual(unplugged.previous.outputs.map(\.uid), ["headphones"])
        XCTAssertEqual(unplugged.current.outputs.map(\.uid), ["hdmi"], "back to the one plugged before")
        XCTAssertEqual(session.client?.port(named: "caller:out_1")?.connections, ["hdmi:playback_1"])
    }
}
