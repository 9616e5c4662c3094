import Foundation
import JackTestSupport
import LoopbackHarness
import XCTest

/// The session and jas on PipeWire's JACK: a private headless PipeWire
/// daemon (null sinks, no hardware), every client a `pw-jack jas` process
/// (this test process runs on jack2's libjack).
final class PipeWireTests: JackTestCase {
    private var daemons: [PipeWireServer] = []

    override func tearDown() {
        let failed = (testRun?.totalFailureCount ?? 0) > 0
        for daemon in daemons {
            if failed { print("---- PipeWire '\(daemon.name)' log ----\n\(daemon.log)\n---- end of log ----") }
            daemon.stop()
        }
        daemons.removeAll()
        super.tearDown()
    }

    private func startDaemon(name: String = LoopbackServer.uniqueName(prefix: "jas-pw")) throws -> PipeWireServer {
        do {
            let daemon = try PipeWireServer(name: name)
            daemons.append(daemon)
            return daemon
        } catch {
            XCTFail("could not start PipeWire: \(error)")
            throw error
        }
    }

    private func pwJas(_ daemon: PipeWireServer, _ arguments: [String], environment: [String: String] = [:]) throws
        -> (status: Int32, output: String) {
        try run(daemon.command([jas] + arguments), environment: daemon.environment.merging(environment) { $1 })
    }

    private func jsonLines(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    func testStatusSaysItIsPipeWireWithItsVersion() throws {
        let daemon = try startDaemon()
        let status = try pwJas(daemon, ["status", "--server", daemon.name, "--json"])
        XCTAssertEqual(status.status, 0, status.output)
        let object = try XCTUnwrap(jsonLines(status.output).first, status.output)
        let implementation = try XCTUnwrap(object["implementation"] as? [String: Any], status.output)
        XCTAssertEqual(implementation["implementation"] as? String, "PipeWire")
        let version = try XCTUnwrap(implementation["server_version"] as? String, status.output)
        XCTAssertTrue(version.range(of: #"^\d+\.\d+\.\d+$"#, options: .regularExpression) != nil, version)
        XCTAssertNil(implementation["netjack"])
        let ports = (object["ports"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        XCTAssertTrue(ports.contains("Null Sink:playback_FL") && ports.contains("Null Sink:monitor_FL"), "\(ports)")
        XCTAssertEqual(object["period_frames"] as? Int, daemon.quantum)
        let text = try pwJas(daemon, ["status", "--server", daemon.name])
        XCTAssertTrue(text.output.contains("PipeWire \(version) (libjack "), text.output)
        // And jackd2 says it is jackd2.
        let server = try startServer(period: 256)
        let jackd = try run([jas, "status", "--server", server.name, "--json"])
        let jackdImplementation = try XCTUnwrap(jsonLines(jackd.output).first?["implementation"] as? [String: Any])
        XCTAssertEqual(jackdImplementation["implementation"] as? String, "jackd2", jackd.output)
        XCTAssertEqual(jackdImplementation["pid"] as? Int, Int(server.pid), jackd.output)
    }

    func testSelftestThroughANullSinkIsBitExactAndExpectsNoDelayUntilOneIsCalibrated() throws {
        let daemon = try startDaemon()
        let config = NSTemporaryDirectory() + "jas-pw-config-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: config) }
        let environment = ["XDG_CONFIG_HOME": config]
        let path = ["--server", daemon.name, "--out", "Null Sink:playback_FL", "--in", "Null Sink:monitor_FL"]
        // PipeWire reports 0 latency for a null sink while the audio returns a
        // quantum later. Its loop through the monitor drops a period now and
        // then without an xrun (a C client sees it too): such a run is retried.
        let attempts = ["--attempts", "10"]
        let first = try pwJas(daemon, ["selftest"] + path + attempts + ["--duration", "1", "--json"], environment: environment)
        let verdict = try XCTUnwrap(jsonLines(first.output).first, first.output)
        XCTAssertEqual(verdict["bit_exact"] as? Bool, true, first.output)
        XCTAssertEqual(verdict["dropouts"] as? Int, 0, first.output)
        XCTAssertEqual(verdict["mismatches"] as? Int, 0, first.output)
        XCTAssertEqual(verdict["measured_roundtrip_frames"] as? Int, daemon.quantum, first.output)
        XCTAssertEqual(verdict["input_latency_frames"] as? Int, 0, first.output)
        XCTAssertEqual(verdict["output_latency_frames"] as? Int, 0, first.output)
        XCTAssertNil(verdict["expected_roundtrip_frames"], "0 is no delay to expect: \(first.output)")
        XCTAssertEqual(verdict["passed"] as? Bool, true, first.output)
        XCTAssertEqual(first.status, 0, first.output)
        let text = try pwJas(daemon, ["selftest"] + path + attempts + ["--duration", "1"], environment: environment)
        XCTAssertTrue(text.output.contains("none expected: the server reports 0 latency for this path"), text.output)

        // Measured and stored, the delay is what the session reports and selftest then expects.
        let calibration = try pwJas(daemon, ["latency"] + path + ["--count", "3", "--calibrate"], environment: environment)
        XCTAssertEqual(calibration.status, 0, calibration.output)
        let again = try pwJas(daemon, ["selftest"] + path + attempts + ["--duration", "1", "--json"], environment: environment)
        let calibrated = try XCTUnwrap(jsonLines(again.output).first, again.output)
        XCTAssertEqual(calibrated["expected_roundtrip_frames"] as? Int, daemon.quantum, again.output)
        XCTAssertEqual(calibrated["measured_roundtrip_frames"] as? Int, daemon.quantum, again.output)
        XCTAssertEqual(again.status, 0, again.output)
    }

    func testADaemonRestartIsAMediaServicesReset() throws {
        let daemon = try startDaemon()
        let monitor = Process()
        let command = daemon.command([jas, "monitor", "--server", daemon.name, "--json"])
        monitor.executableURL = URL(fileURLWithPath: command[0])
        monitor.arguments = Array(command.dropFirst())
        monitor.environment = ProcessInfo.processInfo.environment.merging(daemon.environment) { $1 }
        let output = Pipe()
        monitor.standardOutput = output
        monitor.standardError = FileHandle.nullDevice
        let lines = LineCollector(output)
        try monitor.run()
        defer { if monitor.isRunning { kill(monitor.processIdentifier, SIGKILL) } }
        func events(_ name: String) -> [[String: Any]] { lines.objects.filter { $0["event"] as? String == name } }
        XCTAssertTrue(waitUntil(timeout: 10) { !events("routeChange").isEmpty }, "\(lines.objects)")
        kill(daemon.pid, SIGKILL)
        daemon.stop()
        XCTAssertTrue(waitUntil(timeout: 10) { !events("mediaServicesWereLost").isEmpty }, "\(lines.objects)")
        usleep(500_000)
        _ = try startDaemon(name: daemon.name)
        XCTAssertTrue(waitUntil(timeout: 20) { !events("mediaServicesWereReset").isEmpty }, "\(lines.objects)")
        XCTAssertEqual(events("mediaServicesWereReset").first?["reactivated"] as? Bool, true)
        kill(monitor.processIdentifier, SIGINT)
        XCTAssertTrue(waitUntil(timeout: 10) { !monitor.isRunning })
    }
}
