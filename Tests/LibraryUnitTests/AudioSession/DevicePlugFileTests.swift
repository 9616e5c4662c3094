import Foundation
import LoopbackHarness
import XCTest

/// The plug file's rules, without a server: one holder per device, and only
/// the process the kernel says holds the lock is ever signalled.
final class DevicePlugFileTests: XCTestCase {
    let server = "plug-file-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

    func testASecondClaimIsRefusedNamingTheHolder() throws {
        let claim = try DevicePlugFile.Claim(server: server, device: "cans")
        defer { claim.release() }
        XCTAssertEqual(try String(contentsOfFile: claim.path, encoding: .utf8), "\(getpid())\n")
        XCTAssertThrowsError(try DevicePlugFile.Claim(server: server, device: "cans")) { error in
            XCTAssertEqual(error as? DevicePlugFile.Failure,
                           .alreadyPlugged(device: "cans", server: server, pid: "\(getpid())"))
        }
        claim.release()
        let again = try DevicePlugFile.Claim(server: server, device: "cans")
        again.release()
    }

    func testAFileWhoseTextIsNotTheLockHolderGetsNobodySignalled() throws {
        let victim = Process()
        victim.executableURL = URL(fileURLWithPath: "/bin/sleep")
        victim.arguments = ["30"]
        try victim.run()
        defer { victim.terminate() }
        // This process holds the lock; the file names the victim.
        let path = try DevicePlugFile.path(server: server, device: "liar")
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer {
            unlink(path)
            close(descriptor)
        }
        XCTAssertEqual(flock(descriptor, LOCK_EX | LOCK_NB), 0)
        let text = Array("\(victim.processIdentifier)\n".utf8)
        XCTAssertEqual(text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }, text.count)
        XCTAssertThrowsError(try DevicePlugFile.unplug(server: server, device: "liar")) { error in
            XCTAssertEqual(error as? DevicePlugFile.Failure, .notTheHolder(device: "liar", path: path))
        }
        XCTAssertTrue(victim.isRunning, "the PID the file named was signalled")
    }

    func testAHolderIsEndedAndAFileNobodyHoldsIsRemoved() throws {
        // A holder in another process that writes its PID, as a plug does.
        let path = try DevicePlugFile.path(server: server, device: "held")
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = ["-c", """
            import fcntl, os, sys, time
            f = open(sys.argv[1], "w"); fcntl.flock(f, fcntl.LOCK_EX); f.write(f"{os.getpid()}\\n"); f.flush()
            time.sleep(30)
            """, path]
        try holder.run()
        defer { if holder.isRunning { holder.terminate() } }
        XCTAssertTrue(waitUntil { (try? String(contentsOfFile: path, encoding: .utf8))?.hasSuffix("\n") == true })
        XCTAssertEqual(try DevicePlugFile.unplug(server: server, device: "held"), holder.processIdentifier)
        holder.waitUntilExit()
        XCTAssertEqual(holder.terminationReason, .uncaughtSignal)

        // Its file is left behind, held by nobody: removed, nobody signalled.
        XCTAssertThrowsError(try DevicePlugFile.unplug(server: server, device: "held")) { error in
            XCTAssertEqual(error as? DevicePlugFile.Failure, .stale(device: "held", path: path))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertThrowsError(try DevicePlugFile.unplug(server: server, device: "held")) { error in
            XCTAssertEqual(error as? DevicePlugFile.Failure, .notPlugged(device: "held", server: server, path: path))
        }
    }

    override func tearDown() {
        if let path = try? DevicePlugFile.path(server: server, device: "x") {
            try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
        }
    }

    private func waitUntil(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            usleep(10_000)
        }
        return true
    }
}
