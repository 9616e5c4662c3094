import JackKit
@testable import JackAudioSession
import XCTest

/// Which ports an activation registers, takes again or lets go (no jackd;
/// against a real server: `ActivationTests`, a server with no room left).
final class PortAssignmentTests: XCTestCase {
    struct HeldPort: RegisteredPort, Equatable {
        let shortName: String
        let flags: PortFlags
        let serial: Int
    }

    /// Registers with increasing serials, refusing the names in `refused`; records every call.
    final class Server {
        var refused: Set<String> = []
        var calls: [String] = []
        private var serial = 100

        func register(_ wanted: PortAssignment<HeldPort>.Wanted) throws(JackError) -> HeldPort {
            calls.append("register \(wanted.shortName)")
            guard !refused.contains(wanted.shortName) else {
                throw .portRegistrationFailed(port: "app:\(wanted.shortName)", client: "app")
            }
            serial += 1
            return HeldPort(shortName: wanted.shortName, flags: wanted.flags, serial: serial)
        }

        func unregister(_ port: HeldPort) { calls.append("unregister \(port.shortName)#\(port.serial)") }
    }

    func testAFirstActivationRegistersInputsThenOutputs() throws {
        let server = Server()
        let assignment = PortAssignment<HeldPort>(inputs: ["in_1", "in_2"], outputs: ["out_1"], kept: [])
        XCTAssertEqual(assignment.released, [])
        let ports = try assignment.carryOut(register: server.register, unregister: server.unregister)
        XCTAssertEqual(ports.inputs.map(\.shortName), ["in_1", "in_2"])
        XCTAssertEqual(ports.outputs.map(\.shortName), ["out_1"])
        XCTAssertEqual(ports.inputs.map(\.flags), [.input, .input])
        XCTAssertEqual(ports.outputs.map(\.flags), [.output])
        XCTAssertEqual(server.calls, ["register in_1", "register in_2", "register out_1"])
    }

    func testKeptPortsAreTakenAgainByNameAndDirectionAndTheRestLetGo() throws {
        let server = Server()
        let kept = [HeldPort(shortName: "out_1", flags: .output, serial: 1),
                    HeldPort(shortName: "in_1", flags: .output, serial: 2), // same name, other direction
                    HeldPort(shortName: "out_3", flags: .output, serial: 3)]
        let assignment = PortAssignment(inputs: ["in_1"], outputs: ["out_1", "out_2"], kept: kept)
        XCTAssertEqual(assignment.reused, [nil, kept[0], nil])
        XCTAssertEqual(assignment.released, [kept[1], kept[2]])
        let ports = try assignment.carryOut(register: server.register, unregister: server.unregister)
        XCTAssertEqual(ports.outputs.first, kept[0], "the kept port itself, not a new one")
        XCTAssertEqual(server.calls, ["unregister in_1#2", "unregister out_3#3", "register in_1", "register out_2"])
    }

    func testARefusedPortLetsGoOfEveryPortTheActivationHeld() {
        let server = Server()
        server.refused = ["out_1"]
        let kept = [HeldPort(shortName: "out_2", flags: .output, serial: 1)]
        let assignment = PortAssignment(inputs: ["in_1", "in_2"], outputs: ["out_1", "out_2"], kept: kept)
        XCTAssertThrowsError(try assignment.carryOut(register: server.register, unregister: server.unregister)) { error in
            XCTAssertEqual(error as? JackError, .portRegistrationFailed(port: "app:out_1", client: "app"))
        }
        // Nothing is asked after the refusal, and every name the next
        // activation asks for is free again: the two registered, and the kept
        // port the refusal came before.
        XCTAssertEqual(server.calls, ["register in_1", "register in_2", "register out_1",
                                      "unregister in_1#101", "unregister in_2#102", "unregister out_2#1"])
    }
}
