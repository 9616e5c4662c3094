import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
import Synchronization
import XCTest

/// Record permission: stored per application; without a grant a recording
/// category's input delivers only silence.
final class RecordPermissionTests: JackTestCase {
    var store: RecordPermissionStore!

    override func setUp() {
        super.setUp()
        store = RecordPermissionStore(path: NSTemporaryDirectory() + "/jas-permission-\(UUID().uuidString).json")
    }

    override func tearDown() {
        unlink(store.path)
        super.tearDown()
    }

    func testStoreRoundTrip() throws {
        XCTAssertEqual(store.permission(for: "app"), .undetermined)
        try store.set(.granted, for: "app")
        try store.set(.denied, for: "other")
        XCTAssertEqual(store.permission(for: "app"), .granted)
        XCTAssertEqual(store.permission(for: "other"), .denied)
        try store.set(.undetermined, for: "app")
        XCTAssertEqual(store.permission(for: "app"), .undetermined)
        try "not json".write(toFile: store.path, atomically: true, encoding: .utf8)
        XCTAssertEqual(store.permission(for: "other"), .undetermined, "a damaged file means no decisions")
    }

    func testDeniedRecordingHearsSilenceAndGrantedHearsTheSignal() throws {
        let server = try startServer()
        // A plain JACK client plays a constant into the loopback.
        let source = try Client(name: "source", serverName: server.name)
        defer { source.close() }
        let out = try source.registerPort("out", flags: .output)
        try source.setProcessor(RealtimeProcessor(client: source, inputs: [], outputs: [out]) { cycle in
            cycle.outputs[0].update(repeating: 0.25, count: cycle.frameCount)
        })
        try source.activate()
        try source.connect(out.name, to: "loopback:playback_1")

        try store.set(.denied, for: "recorder")
        let session = AudioSession(clientName: "recorder", serverName: server.name, recordConsent: .stored(store))
        defer { session.close() }
        try session.setCategory(.record, mode: .measurement)
        try session.setPreferredInputNumberOfChannels(1)
        session.setPreferredInputPortNames(["loopback:capture_1"])
        let loudest = Atomic<UInt32>(0)
        session.setRenderBlock { cycle in
            var peak: Float = 0
            for frame in 0..<cycle.frameCount { peak = max(peak, abs(cycle.inputs[0][frame])) }
            loudest.store(peak.bitPattern, ordering: .relaxed)
        }
        try session.setActive(true)
        XCTAssertTrue(session.isInputSilencedByPermission)
        let cycles = session.cyclesCompleted
        XCTAssertTrue(waitUntil { session.cyclesCompleted > cycles + 20 })
        XCTAssertEqual(Float(bitPattern: loudest.load(ordering: .relaxed)), 0, "denied: only silence")

        try store.set(.granted, for: "recorder")
        session.requestRecordPermission { granted in XCTAssertTrue(granted) }
        XCTAssertFalse(session.isInputSilencedByPermission)
        XCTAssertTrue(waitUntil { Float(bitPattern: loudest.load(ordering: .relaxed)) == 0.25 })
    }
}
