@testable import JackAudioSession
import XCTest

/// What the session connects and disconnects when it takes a route, decided
/// from the connections as they are (no jackd; against real servers: the
/// route-change, seed and multiRoute tests).
final class ConnectionChangesTests: XCTestCase {
    typealias Own = ConnectionChanges.OwnPort
    let hardware: Set<String> = ["system:capture_1", "system:capture_2", "system:playback_1", "system:playback_2",
                                 "usb:capture_1", "usb:playback_1"]

    func connection(_ source: String, _ destination: String) -> PortConnection {
        PortConnection(source: source, destination: destination)
    }

    func testAFirstActivationMakesEveryConnectionOfThePlanAndDropsNothing() {
        let changes = ConnectionChanges(
            inputs: [Own(name: "app:in_1", connections: []), Own(name: "app:in_2", connections: [])],
            outputs: [Own(name: "app:out_1", connections: []), Own(name: "app:out_2", connections: [])],
            planInputs: ["system:capture_1", "system:capture_2"], planOutputs: ["system:playback_1", nil],
            routedBefore: [], isPhysical: hardware.contains)
        XCTAssertEqual(changes.makes, [connection("system:capture_1", "app:in_1"), connection("system:capture_2", "app:in_2"),
                                       connection("app:out_1", "system:playback_1")], "an output the plan leaves unrouted gets nothing")
        XCTAssertEqual(changes.drops, [])
        XCTAssertEqual(changes.missing, 3)
    }

    func testARouteChangeLeavesTheOldDeviceAndKeepsAnotherClientsTap() {
        let changes = ConnectionChanges(
            inputs: [Own(name: "app:in_1", connections: ["system:capture_1", "meter:out"])],
            outputs: [Own(name: "app:out_1", connections: ["system:playback_1", "recorder:in_1"])],
            planInputs: ["usb:capture_1"], planOutputs: ["usb:playback_1"],
            routedBefore: ["system:capture_1", "system:playback_1"], isPhysical: hardware.contains)
        XCTAssertEqual(changes.drops, [connection("system:capture_1", "app:in_1"), connection("app:out_1", "system:playback_1")])
        XCTAssertEqual(changes.makes, [connection("usb:capture_1", "app:in_1"), connection("app:out_1", "usb:playback_1")])
        XCTAssertEqual(changes.missing, 2)
    }

    func testWhatIsThereAlreadyStaysAndIsNotCountedMissing() {
        let changes = ConnectionChanges(
            inputs: [Own(name: "app:in_1", connections: ["system:capture_1"])],
            outputs: [Own(name: "app:out_1", connections: ["system:playback_1", "system:playback_2"])],
            planInputs: ["system:capture_1"], planOutputs: ["system:playback_1"],
            routedBefore: ["system:capture_1", "system:playback_1"], isPhysical: hardware.contains)
        XCTAssertEqual(changes.drops, [connection("app:out_1", "system:playback_2")],
                       "a hardware port the plan does not name is left, whoever connected it")
        XCTAssertEqual(changes.makes.count, 2, "made again: JACK answers success")
        XCTAssertEqual(changes.missing, 0)
    }

    func testAPortThePlanNamedBeforeIsLeftEvenWhenItIsNoHardware() {
        let changes = ConnectionChanges(
            inputs: [Own(name: "app:in_1", connections: ["bridge:out_1", "other:out_1"])], outputs: [],
            planInputs: ["system:capture_1"], planOutputs: [],
            routedBefore: ["bridge:out_1"], isPhysical: hardware.contains)
        XCTAssertEqual(changes.drops, [connection("bridge:out_1", "app:in_1")])
    }

    func testWithMissingPortsToleratedAConnectionToAGoneDeviceIsNotMade() {
        let present = hardware.subtracting(["usb:playback_1"])
        let inputs = [Own(name: "app:in_1", connections: [])]
        let outputs = [Own(name: "app:out_1", connections: []), Own(name: "app:out_2", connections: [])]
        func changes(tolerating: Bool) -> ConnectionChanges {
            ConnectionChanges(inputs: inputs, outputs: outputs, planInputs: ["usb:capture_1"],
                              planOutputs: ["usb:playback_1", "system:playback_2"], routedBefore: [],
                              isPhysical: present.contains,
                              exists: tolerating ? { present.contains($0) || $0.hasPrefix("app:") } : nil)
        }
        XCTAssertEqual(changes(tolerating: true).makes, [connection("usb:capture_1", "app:in_1"),
                                                         connection("app:out_2", "system:playback_2")])
        XCTAssertEqual(changes(tolerating: true).missing, 2)
        XCTAssertEqual(changes(tolerating: false).makes.count, 3, "not tolerated: the connect fails and says which port")
    }
}
