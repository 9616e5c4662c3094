import JackAudioSession
import JackKit
import Foundation
import JackTestSupport
import LoopbackHarness
import XCTest

/// Route changes driven by plugging and unplugging simulated devices in a real jackd.
final class RouteChangeTests: JackTestCase {
    /// An active playback session named "player" on `server`, with its events recorded.
    private func activePlayer(on server: LoopbackServer) throws -> (AudioSession, EventRecorder) {
        let session = AudioSession(clientName: "player", serverName: server.name)
        try session.setCategory(.playback)
        try session.setActive(true)
        return (session, EventRecorder(session))
    }

    /// A route refresh waits for a burst of registrations to settle, but a
    /// steady churn of short-lived clients (a script running `jack_lsp` in a
    /// loop, a test polling `jas status`) never settles: a device plugged
    /// meanwhile must still be seen, within the refresh's longest wait.
    func testADeviceIsSeenThroughASteadyChurnOfClients() throws {
        let server = try startServer()
        let (session, recorder) = try activePlayer(on: server)
        defer { session.close() }
        let churn = ClientChurn(server: server.name, pause: 0.02)
        defer { churn.stop() }
        XCTAssertTrue(waitUntil { churn.runs >= 3 })
        let headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        defer { headphones.unplug() }
        XCTAssertTrue(waitUntil(timeout: 2) { recorder.laterRouteChanges.count == 1 },
                      "no route change through the churn (\(churn.runs) clients came and went): \(recorder.events)")
        XCTAssertEqual(recorder.laterRouteChanges.first?.reason, .newDeviceAvailable)
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["headphones"])
    }

    func testHeadphonesLastInWinsAndUnplugMovesBack() throws {
        let server = try startServer()
        let (session, recorder) = try activePlayer(on: server)
        defer { session.close() }
        let systemRoute = session.currentRoute
        XCTAssertEqual(systemRoute.outputs.map(\.uid), ["system"])

        let headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones,
                                             prettyName: "Studio headphones")
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.count == 1 }, "\(recorder.events)")
        let plugged = try XCTUnwrap(recorder.laterRouteChanges.first)
        XCTAssertEqual(plugged.reason, .newDeviceAvailable)
        XCTAssertEqual(plugged.previous, systemRoute)
        XCTAssertEqual(plugged.current.outputs.first?.uid, "headphones")
        XCTAssertEqual(plugged.current.outputs.first?.portType, .headphones)
        XCTAssertEqual(plugged.current.outputs.first?.portName, "Studio headphones")
        XCTAssertEqual(session.currentRoute, plugged.current)
        let client = try XCTUnwrap(session.client)
        assertEventuallyEqual(client.port(named: "player:out_1")?.connections, ["headphones:playback_1"])
        assertEventuallyEqual(client.port(named: "player:out_2")?.connections, ["headphones:playback_2"])

        headphones.unplug()
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.count == 2 }, "\(recorder.events)")
        let unplugged = try XCTUnwrap(recorder.laterRouteChanges.last)
        XCTAssertEqual(unplugged.reason, .oldDeviceUnavailable)
        XCTAssertEqual(unplugged.previous.outputs.first?.uid, "headphones")
        XCTAssertEqual(unplugged.current, systemRoute)
        assertEventuallyEqual(client.port(named: "player:out_1")?.connections, ["system:playback_1"])
    }

    /// A playback session's route has outputs only: a microphone that comes
    /// or goes is no device of it. When its route's connections are made
    /// again in the same refresh as a microphone goes (a netjack2 slave's
    /// driver remakes its playback ports while its capture ports are still
    /// gone), that is the route's configuration changing, not its device
    /// going away (oldDeviceUnavailable, on which a player pauses).
    func testAMicrophoneGoingIsNoDeviceOfAPlayersRoute() throws {
        let server = try startServer()
        let microphone = try SimulatedDevice(name: "mic", serverName: server.name, type: .builtInMic, capturesOnly: true)
        let (session, recorder) = try activePlayer(on: server)
        defer { session.close() }
        let systemRoute = session.currentRoute
        XCTAssertEqual(systemRoute.outputs.map(\.uid), ["system"])

        let other = try Client.checkedOpen(name: "patchbay", serverName: server.name)
        defer { other.close() }
        try other.disconnect("player:out_1", from: "system:playback_1")
        microphone.unplug()
        XCTAssertTrue(waitUntil { !recorder.laterRouteChanges.isEmpty }, "\(recorder.events)")
        let change = try XCTUnwrap(recorder.laterRouteChanges.first)
        XCTAssertEqual(change.reason, .routeConfigurationChange, "\(recorder.events)")
        XCTAssertEqual(change.current, systemRoute)
        assertEventuallyEqual(session.client?.port(named: "player:out_1")?.connections, ["system:playback_1"])
    }

    func testPreferredInputAndSpeakerOverride() throws {
        let server = try startServer()
        let microphone = try SimulatedDevice(name: "usbmic", serverName: server.name, type: .usbAudio, channels: 1)
        defer { microphone.unplug() }
        let speaker = try SimulatedDevice(name: "speaker", serverName: server.name, type: .builtInSpeaker)
        defer { speaker.unplug() }
        let session = AudioSession(clientName: "caller", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playAndRecord)
        try session.setPreferredInputNumberOfChannels(1)
        try session.setActive(true)
        let recorder = EventRecorder(session)
        // Every simulated device loops back, so each has capture ports too.
        XCTAssertEqual(session.availableInputs?.map(\.uid), ["system", "loopback", "usbmic", "speaker"])
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["system"])

        let bogus = PortDescription(portName: "nothing", portType: .lineIn, uid: "nothing", channels: [])
        XCTAssertThrowsError(try session.setPreferredInput(bogus)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .badParam)
        }
        let usb = try XCTUnwrap(session.availableInputs?.first { $0.uid == "usbmic" })
        XCTAssertEqual(usb.portType, .usbAudio)
        try session.setPreferredInput(usb)
        XCTAssertEqual(session.preferredInput?.uid, "usbmic")
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["usbmic"])
        assertEventuallyEqual(session.client?.port(named: "caller:in_1")?.connections, ["usbmic:capture_1"])

        try session.overrideOutputAudioPort(.speaker)
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["speaker"])
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.contains { $0.reason == .override } })
        try session.overrideOutputAudioPort(.none)
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["system"])
    }
}
