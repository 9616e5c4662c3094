import Foundation
import JackTestSupport
import LoopbackHarness
import XCTest

/// jackd2 keeps eight server slots machine-wide and a killed server keeps its
/// slot; the harness must free them or, after eight crashes, nothing starts.
final class ServerRegistryTests: JackTestCase {
    /// Starts jackd directly (not through the harness, so nothing frees its
    /// slot for it) and waits until it holds a registry slot; nil when jackd
    /// exits instead (all slots taken).
    private func startBareServer() throws -> (process: Process, name: String)? {
        let name = LoopbackServer.uniqueName(prefix: "jas-bare")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        process.arguments = ["-n", name, "-d", "dummy", "-r", "48000", "-p", "256"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let registered = waitUntil(timeout: 10) {
            !process.isRunning || ServerRegistry.slots()?.contains { $0.prefix.hasSuffix(":\(name):") } ?? false
        }
        guard registered, process.isRunning else {
            process.waitUntilExit()
            return nil
        }
        return (process, name)
    }

    private func hardKill(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func testKilledServerKeepsItsSlotUntilReclaimed() throws {
        let (process, name) = try XCTUnwrap(startBareServer(), "a bare jackd could not register")
        let pid = process.processIdentifier
        hardKill(process)
        XCTAssertTrue(ServerRegistry.slots()?.contains { $0.pid == pid } ?? false,
                      "jackd freed its own slot after SIGKILL; the reclaim would be unnecessary")
        let freed = ServerRegistry.reclaimDeadServers()
        XCTAssertTrue(freed.contains(name), "freed \(freed), expected \(name)")
        XCTAssertFalse(ServerRegistry.slots()?.contains { $0.pid == pid } ?? true)
        let leftovers = (try FileManager.default.contentsOfDirectory(atPath: "/dev/shm")).filter { $0.contains(name) }
        XCTAssertEqual(leftovers, [], "socket and semaphore files of the dead server remain")
    }

    func testReclaimLeavesRunningServersAlone() throws {
        let server = try startServer()
        ServerRegistry.reclaimDeadServers()
        XCTAssertTrue(ServerRegistry.slots()?.contains { $0.prefix.hasSuffix(":\(server.name):") } ?? false)
    }

    func testServersStartAfterKilledServersFilledEverySlot() throws {
        // Kill bare servers until jackd itself refuses to start: every slot is dead.
        var killed = 0
        while let (process, _) = try startBareServer() {
            hardKill(process)
            killed += 1
            XCTAssertLessThanOrEqual(killed, 8, "jackd accepted a ninth server; the registry is not what we think")
            if killed > 8 { break }
        }
        XCTAssertGreaterThan(killed, 0)
        let server = try startServer()
        XCTAssertTrue(server.isRunning)
    }
}
