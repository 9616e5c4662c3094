import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
import XCTest

/// jack2 #395 made deterministic: the `close-race` helper's notification
/// thread sleeps inside libjack's handling of a client arriving (holding
/// libjack's synchronisation mutex), and the helper closes its client right
/// then. libjack's own way hangs for ever; the lane's returns, or reports a
/// wedged library within its bound, and never hangs.
final class CloseRaceTests: JackTestCase {
    /// A running `close-race` process: its output lines and its stdin.
    final class Helper {
        let process = Process()
        let input = Pipe()
        let output = LineCollector.Text()
        let started = Date()

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("close-race")
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            process.standardInput = input
            output.read(pipe)
            try process.run()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }

        var lines: [String] { output.text.split(separator: "\n").map(String.init) }

        /// Waits until the helper printed `line` (false after `timeout` seconds).
        func waitFor(_ line: String, timeout: Double = 10) -> Bool {
            let deadline = ContinuousClock.now + .seconds(timeout)
            while !lines.contains(where: { $0.hasPrefix(line) }) {
                if ContinuousClock.now > deadline || !process.isRunning && !lines.contains(where: { $0.hasPrefix(line) }) {
                    return lines.contains(where: { $0.hasPrefix(line) })
                }
                usleep(10_000)
            }
            return true
        }

        /// Waits for the helper to exit; nil when it is still running after `timeout` seconds.
        func exitStatus(within timeout: Double) -> Int32? {
            let deadline = ContinuousClock.now + .seconds(timeout)
            while process.isRunning {
                if ContinuousClock.now > deadline { return nil }
                usleep(10_000)
            }
            return process.terminationStatus
        }
    }

    /// Starts the helper on a fresh server, waits until its notification
    /// thread sleeps in the hook (a client arriving sets it off), and, for
    /// "stopped", stops the server and lets the helper close.
    private func race(_ mode: String, _ scenario: String, holdMilliseconds: Int) throws -> (Helper, LoopbackServer) {
        let server = try startServer(period: 256)
        let helper = try Helper([server.name, mode, scenario, String(holdMilliseconds)])
        XCTAssertTrue(helper.waitFor("armed"), "the helper never opened its client: \(helper.lines)")
        let arrival = try Client(name: "arrival", serverName: server.name)
        XCTAssertTrue(helper.waitFor("inside"), "the notification thread never entered the hook: \(helper.lines)")
        arrival.close()
        if scenario == "stopped" {
            server.stop()
            helper.input.fileHandleForWriting.write(Data("go\n".utf8))
        }
        return (helper, server)
    }

    func testLibjacksOwnCloseHangsWhileTheNotificationThreadHoldsTheMutex() throws {
        // The reproducer itself: without the lane's care the close never
        // returns, although the hook lets go after 2 s.
        let (helper, _) = try race("raw", "live", holdMilliseconds: 2000)
        XCTAssertNil(helper.exitStatus(within: 6), "libjack's close returned: the race did not happen (\(helper.lines))")
        XCTAssertFalse(helper.lines.contains("closed"))
    }

    func testTheLaneWaitsForTheNotificationThreadOnALiveServer() throws {
        let (helper, _) = try race("safe", "live", holdMilliseconds: 2000)
        XCTAssertEqual(helper.exitStatus(within: 10), 0, "\(helper.lines)")
        XCTAssertTrue(helper.lines.contains("closed"), "\(helper.lines)")
        XCTAssertTrue(helper.lines.contains("reopened"), "libjack no longer opens clients: \(helper.lines)")
        XCTAssertGreaterThan(Date().timeIntervalSince(helper.started), 1.5, "the close did not wait for the thread")
    }

    func testLibjacksOwnCloseHangsAfterTheServerStopped() throws {
        let (helper, _) = try race("raw", "stopped", holdMilliseconds: 2000)
        XCTAssertNil(helper.exitStatus(within: 6), "libjack's close returned: the race did not happen (\(helper.lines))")
    }

    func testTheLaneClosesAClientOfAStoppedServerOnceItsThreadExited() throws {
        let (helper, _) = try race("safe", "stopped", holdMilliseconds: 2000)
        XCTAssertEqual(helper.exitStatus(within: 10), 0, "\(helper.lines)")
        XCTAssertTrue(helper.lines.contains("closed"), "\(helper.lines)")
        XCTAssertTrue(helper.lines.contains { $0.hasPrefix("reopen failed: no JACK server named") },
                      "the next open must say the server is gone, not hang: \(helper.lines)")
    }

    /// The soak's wedge, made deterministic: the close looked at the thread,
    /// found it quiet, then waited for the client-name lock while a client
    /// arrived and sent the thread into libjack's handling (the mutex held),
    /// and closed as soon as it had the lock. The close must look again once
    /// it holds the lock, right before libjack cancels the thread.
    func testAClientArrivingWhileTheCloseWaitsForTheNameLockIsWaitedFor() throws {
        let server = try startServer(period: 256)
        let helper = try Helper([server.name, "safe", "locked", "2000"])
        XCTAssertTrue(helper.waitFor("armed"), "the helper never opened its client: \(helper.lines)")
        // The victim's name lock, as ClientNameLock names it, held by this process.
        let lockPath = "/dev/shm/jackkit-client-\(getuid())-victim.lock"
        let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(lock, 0, lockPath)
        defer { close(lock) }
        XCTAssertEqual(flock(lock, LOCK_EX), 0)
        var holding = true
        defer { if holding { flock(lock, LOCK_UN) } }
        helper.input.fileHandleForWriting.write(Data("go\n".utf8))
        XCTAssertTrue(helper.waitFor("closing"), "\(helper.lines)")
        // The close waits for the lock: the lane's thread sleeps between tries
        // of it, beside the helper's watcher, which sleeps between looks at the hook.
        let pid = helper.process.processIdentifier
        XCTAssertTrue(waitUntil(timeout: 3) {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.filter {
                (try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/wchan", encoding: .utf8)) == "hrtimer_nanosleep"
            }.count >= 2
        }, "the helper's close never waited for the name lock: \(helper.lines)")
        let arrival = try Client(name: "arrival", serverName: server.name)
        XCTAssertTrue(helper.waitFor("inside", timeout: 4), "the notification thread never entered the hook: \(helper.lines)")
        flock(lock, LOCK_UN)
        holding = false
        arrival.close()
        XCTAssertEqual(helper.exitStatus(within: 12), 0, "\(helper.lines)")
        XCTAssertTrue(helper.lines.contains("closed"), "\(helper.lines)")
        XCTAssertTrue(helper.lines.contains("reopened"), "libjack no longer opens clients: \(helper.lines)")
    }

    func testAThreadThatNeverGoesQuietIsReportedAsWedgedNotHung() throws {
        let (helper, _) = try race("safe", "live", holdMilliseconds: 60_000)
        let status = helper.exitStatus(within: ClientLifecycle.quietBound + 6)
        XCTAssertEqual(status, 75, "\(helper.lines)")
        XCTAssertTrue(helper.lines.contains { $0.hasPrefix("wedged: the notification thread of JACK client 'victim'") },
                      "\(helper.lines)")
        XCTAssertTrue(helper.lines.contains { $0.hasPrefix("reopen failed:") && $0.contains("jack2 issue #395") },
                      "a later open must fail at once with the reason: \(helper.lines)")
    }
}
