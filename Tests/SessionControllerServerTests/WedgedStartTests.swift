import Foundation
import JackRuntime
import JackTestSupport
import XCTest

/// libjack wedged while a long-running command is still starting (an open
/// that never returns, here held in its socket's bind): the command's own
/// error ("cannot reach the media server") is said, and it leaves with the
/// restart status a supervisor acts on, 75, not the 2 of a command that
/// could not run. A restarted `jas monitor` in the registry soak met this
/// in a probe's close (jack2 #395) and exited 2.
final class WedgedStartTests: JackTestCase {
    func testACommandWedgedWhileStartingExitsWithTheRestartStatus() throws {
        let server = try startServer()
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let commands = [
            ["monitor", "--server", server.name, "--json"],
            ["meter", "--server", server.name, "--ports", "loopback:capture_1", "--json"],
            ["record", "--server", server.name, "--ports", "loopback:capture_1", "--output", "\(folder)/take.wav"],
        ]
        // Every client the commands open ("jas-monitor", "jas-meter", "jas-record" and their probes) holds
        // in bind(2) for longer than ClientLifecycle's open bound.
        let hold = ["LD_PRELOAD": try HookLibrary.clientSocket.path(), "HOLD_JACK_BIND_NAME": "jas-",
                    "HOLD_JACK_BIND_MS": String(Int(ClientLifecycle.openBound * 1000) + 60_000)]
        let started = try commands.map { arguments in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: jas)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(hold) { $1 }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            let text = LineCollector.Text()
            text.read(output)
            try process.run()
            return (process, text)
        }
        defer { for (process, _) in started where process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        XCTAssertTrue(waitUntil(timeout: ClientLifecycle.openBound + 30) { started.allSatisfy { !$0.0.isRunning } },
                      "still running: " + started.map { $0.1.text }.joined(separator: "; "))
        for (process, text) in started {
            process.waitUntilExit()
            text.waitForEnd()
            let name = process.arguments?.first ?? ""
            XCTAssertEqual(process.terminationStatus, 75, "jas \(name): \(text.text)")
            XCTAssertTrue(text.text.contains("did not return within \(Int(ClientLifecycle.openBound)) s"), text.text)
            XCTAssertTrue(text.text.contains("exiting with status 75 so that a supervisor restarts it"), text.text)
        }
    }
}
