import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import Synchronization
import XCTest

/// A stand-in audio object whose running state a test controls.
final class FakePlayer: AudioObject, @unchecked Sendable {
    let running = Atomic<Bool>(true)
    var isRunning: Bool { running.load(ordering: .relaxed) }
}

final class ActivationTests: JackTestCase {
    func testDeactivatingWhileAnAudioObjectRunsIsBusy() throws {
        let server = try startServer()
        let session = AudioSession(clientName: "busy", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback)
        try session.setActive(true)
        let player = FakePlayer()
        session.attach(player)
        XCTAssertThrowsError(try session.setActive(false)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .isBusy)
        }
        XCTAssertTrue(session.isActive)
        player.running.store(false, ordering: .relaxed)
        try session.setActive(false, options: .notifyOthersOnDeactivation)
        XCTAssertFalse(session.isActive)
    }

    func testAudioProcessingActivatesWithoutPorts() throws {
        let server = try startServer()
        let session = AudioSession(clientName: "offline", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.audioProcessing)
        try session.setActive(true)
        XCTAssertTrue(session.isActive)
        XCTAssertEqual(session.inputPortNames + session.outputPortNames, [])
        let client = try XCTUnwrap(session.client)
        XCTAssertEqual(client.portNames(matching: "^offline:", type: nil), [])
        XCTAssertEqual(session.currentRoute, .empty)
    }

    func testFirstActivationPostsCategoryChangeAndPortsFollowTheCategory() throws {
        let server = try startServer()
        let center = NotificationCenter()
        let session = AudioSession(clientName: "follow", serverName: server.name, notificationCenter: center)
        defer { session.close() }
        let recorder = EventRecorder(session)
        let notified = Mutex<[UInt]>([])
        let token = center.addObserver(forName: AudioSessionNotification.routeChange, object: nil, queue: nil) { note in
            let reason = note.userInfo?[AudioSessionNotification.routeChangeReasonKey] as? UInt
            notified.withLock { $0.append(reason ?? 999) }
        }
        defer { center.removeObserver(token) }

        try session.setCategory(.playback)
        try session.setActive(true)
        XCTAssertEqual(session.outputPortNames, ["follow:out_1", "follow:out_2"])
        XCTAssertEqual(session.inputPortNames, [])
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["system"])
        XCTAssertEqual(session.currentRoute.outputs.first?.portType, .lineOut)
        XCTAssertTrue(waitUntil { recorder.routeChanges.count == 1 })
        XCTAssertEqual(recorder.routeChanges.first?.reason, .categoryChange)
        XCTAssertEqual(recorder.routeChanges.first?.previous, .empty)

        // During activation the change takes effect at once.
        let before = session.currentRoute
        try session.setCategory(.playAndRecord)
        XCTAssertTrue(session.isActive)
        XCTAssertEqual(session.inputPortNames, ["follow:in_1", "follow:in_2"])
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["system"])
        XCTAssertTrue(waitUntil { recorder.routeChanges.count == 2 })
        XCTAssertEqual(recorder.routeChanges.last?.reason, .categoryChange)
        XCTAssertEqual(recorder.routeChanges.last?.previous, before)
        XCTAssertEqual(notified.withLock { $0 }, [RouteChangeReason.categoryChange.rawValue,
                                                  RouteChangeReason.categoryChange.rawValue])
    }

    func testPropertiesAndTheirErrors() throws {
        let server = try startServer()
        let session = AudioSession(clientName: "props", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback)
        try session.setActive(true)
        XCTAssertEqual(session.inputLatency, 0, "no input: nothing to report")
        XCTAssertThrowsError(try session.inputLatencyRange) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory)
        }
        XCTAssertEqual(session.inputNumberOfChannels, 0)
        XCTAssertThrowsError(try session.checkedInputNumberOfChannels()) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory)
        }
        XCTAssertEqual(session.outputNumberOfChannels, 2)
        XCTAssertEqual(session.availableInputs, [], "no inputs under a category without input")
        XCTAssertTrue(session.isInputAvailable)
        XCTAssertFalse(session.isInputGainSettable)
        XCTAssertEqual(session.inputGain, 1)
        XCTAssertThrowsError(try session.setInputGain(0.5)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .badParam)
        }
        XCTAssertEqual(session.outputVolume, 1)
        XCTAssertFalse(session.isOtherAudioPlaying)
        XCTAssertFalse(session.secondaryAudioShouldBeSilencedHint)
        try session.setPreferredSampleRate(44100)
        XCTAssertEqual(session.preferredSampleRate, 44100)
        XCTAssertEqual(session.sampleRate, 48000, "a running server keeps its rate")
        XCTAssertThrowsError(try session.setPreferredOutputNumberOfChannels(3)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .badParam)
            XCTAssertTrue("\(error)".contains(server.name))
        }
        XCTAssertThrowsError(try session.overrideOutputAudioPort(.speaker)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .badParam)
        }
    }
    func testAPortTheServerRefusesLeavesNoPortBehindAndTheNextActivationWorks() throws {
        // A server with room for few ports; a filler client takes all but three.
        let server = try startServer(serverArguments: ["-p", "16"])
        let filler = try Client(name: "filler", serverName: server.name)
        defer { filler.close() }
        var held: [JackKit.Port] = []
        while let port = try? filler.registerPort("hold_\(held.count + 1)", flags: .output) { held.append(port) }
        for port in held.suffix(3) { try filler.unregisterPort(port) }
        held.removeLast(3)
        let session = AudioSession(clientName: "crowded", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playAndRecord)
        // Four ports wanted, three free: the fourth is refused.
        XCTAssertThrowsError(try session.setActive(true)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .resourceNotAvailable, "\(error)")
        }
        XCTAssertFalse(session.isActive)
        let observer = try Client(name: "observer", serverName: server.name)
        defer { observer.close() }
        XCTAssertEqual(observer.portNames(matching: "^crowded:", type: nil), [],
                       "the ports registered before the refusal are let go")
        // Room again: the session activates with its four ports.
        for port in held.suffix(2) { try filler.unregisterPort(port) }
        try session.setActive(true)
        XCTAssertEqual(session.inputPortNames, ["crowded:in_1", "crowded:in_2"])
        XCTAssertEqual(session.outputPortNames, ["crowded:out_1", "crowded:out_2"])
    }
}
