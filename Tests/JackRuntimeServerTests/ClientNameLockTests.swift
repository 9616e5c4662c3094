import Foundation
import JackTestSupport
import XCTest

/// libjack names a client's notification socket after the client and the
/// user, not the server: two processes opening clients of one name at the
/// same moment, on two servers, took each other's socket, and one failed
/// ("server error"; seen when two loggers started together). the lane holds a
/// lock per client name over every open and close; here the first process's
/// moment between binding its socket and its server connecting to it is
/// made to last 1.5 s (a preloaded hook), and the second opens inside it.
final class ClientNameLockTests: JackTestCase {
    func testTwoProcessesOpeningOneNameOnTwoServersBothSucceed() throws {
        let first = try startServer(period: 256)
        let second = try startServer(period: 256)
        let name = "same-name-\(getpid())"
        let socket = "/dev/shm/jack_\(name)_\(getuid())_0"
        unlink(socket)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let arguments = { (server: String) in
            ["record", "--server", server, "--name", name, "--ports", "loopback:capture_1", "--output", "\(folder)/\(server).wav",
             "--for", "1"]
        }
        let held = Process()
        held.executableURL = URL(fileURLWithPath: jas)
        held.arguments = arguments(first.name)
        held.environment = ProcessInfo.processInfo.environment.merging(
            ["LD_PRELOAD": try HookLibrary.clientSocket.path(), "HOLD_JACK_BIND_MS": "1500", "HOLD_JACK_BIND_NAME": name]) { $1 }
        let heldOutput = Pipe()
        held.standardError = heldOutput
        held.standardOutput = FileHandle.nullDevice
        try held.run()
        // The first has bound its socket and holds there.
        XCTAssertTrue(waitUntil(timeout: 10) { access(socket, F_OK) == 0 }, "the first never bound its socket")
        let other = try run([jas] + arguments(second.name), timeout: 60)
        held.waitUntilExit()
        let heldText = String(decoding: heldOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(held.terminationStatus, 0, heldText)
        XCTAssertEqual(other.status, 0, other.output)
    }
}
