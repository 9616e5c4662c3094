import Foundation
import JackTestSupport
import LoopbackHarness
import XCTest

/// `jas latency` as a separate process, read through its JSON Lines.
final class LatencyCommandTests: JackTestCase {
    func testJSONLinesOnAPrivateServer() throws {
        let result = try run([jas, "latency", "--json", "--count", "2", "--period", "128"])
        XCTAssertEqual(result.status, 0, result.output)
        let readings = jsonLines(result.output)
        XCTAssertGreaterThanOrEqual(readings.count, 2, result.output)
        for key in ["measured_frames", "measured_ms", "reported_frames", "excess_frames", "inverted", "valid"] {
            XCTAssertTrue(readings.allSatisfy { $0.keys.contains(key) }, "missing \(key) in \(result.output)")
        }
        let valid = readings.filter { $0["valid"] as? Bool == true }
        XCTAssertEqual(valid.count, 2)
        for reading in valid {
            XCTAssertEqual(reading["measured_frames"] as? Double ?? -1, 128, accuracy: 0.001)
            XCTAssertEqual(reading["inverted"] as? Bool, false)
        }
        XCTAssertFalse(try run(["pgrep", "-f", "jackd -n jas-latency-"]).status == 0, "the private jackd is still running")
    }

    func testNoSignalExitsNonZeroWithAMessageAndNoNumber() throws {
        let server = try startServer(period: 256)
        // Nothing is sent to loopback:playback_2, so loopback:capture_2 stays silent.
        let result = try run([jas, "latency", "--server", server.name, "--in", "loopback:capture_2", "--count", "1",
                              "--json"])
        XCTAssertEqual(result.status, 1, result.output)
        let readings = jsonLines(result.output)
        XCTAssertEqual(readings.filter { $0["problem"] as? String != "xrun" }.count, 10,
                       "gives up after 2·count + 8 readings that found no signal (xrun-spoilt ones aside): \(result.output)")
        for reading in readings {
            XCTAssertEqual(reading["valid"] as? Bool, false)
            XCTAssertTrue(reading["measured_frames"] is NSNull)
            XCTAssertTrue(reading["excess_frames"] is NSNull)
            // An xrun on this busy machine may spoil a window first; never a number.
            XCTAssertTrue(["signal too weak", "xrun"].contains(reading["problem"] as? String), "\(reading)")
        }
        XCTAssertTrue(readings.contains { $0["problem"] as? String == "signal too weak" })
        XCTAssertTrue(result.output.contains("0 valid reading(s) of 1 wanted"), result.output)
    }

    func testUnknownPortIsNamedBeforeAnythingRuns() throws {
        let server = try startServer()
        let result = try run([jas, "latency", "--server", server.name, "--in", "nosuch:port", "--count", "1"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.output.contains("nosuch:port"), result.output)
    }

    func testCalibrateStoresTheMedianExcessForTheServerAndPorts() throws {
        let directory = NSTemporaryDirectory() + "/jas-xdg-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try startServer(period: 256)
        let device = try SimulatedDevice(name: "rig", serverName: server.name, type: .usbAudio, channels: 1)
        defer { device.unplug() }
        let environment = ["XDG_CONFIG_HOME": directory]
        let arguments = [jas, "latency", "--server", server.name, "--out", "rig:playback_1", "--in", "rig:capture_1"]
        let calibration = try run(arguments + ["--count", "3", "--calibrate"], environment: environment)
        XCTAssertEqual(calibration.status, 0, calibration.output)
        XCTAssertTrue(calibration.output.contains("calibrated"), calibration.output)
        let data = try XCTUnwrap(FileManager.default.contents(atPath: directory + "/jackaudiosession/latency-calibration.json"))
        let stored = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: [String: [String: Int]]])
        let capture = try XCTUnwrap(stored[server.name]?["capture"]?["rig:capture_1"])
        let playback = try XCTUnwrap(stored[server.name]?["playback"]?["rig:playback_1"])
        XCTAssertGreaterThan(capture + playback, 0)
        // Measured again with the calibration in place, the excess is gone.
        let again = try run(arguments + ["--count", "1", "--json"], environment: environment)
        let reading = try XCTUnwrap(jsonLines(again.output).first { $0["valid"] as? Bool == true }, again.output)
        XCTAssertEqual(reading["excess_frames"] as? Double ?? -1, 0, accuracy: 0.5)
        XCTAssertEqual(reading["reported_frames"] as? Int, capture + playback)
    }
}

/// Two measurements on one server: the later one takes the audio, the earlier
/// one says by whom it was interrupted, and measures again when it ends.
final class LatencyInterruptionTests: JackTestCase {
    func testAnInterruptedMeasurementSaysByWhomAndResumes() throws {
        let server = try startServer(period: 256)
        let first = Process()
        first.executableURL = URL(fileURLWithPath: jas)
        first.arguments = ["latency", "--server", server.name, "--json"]
        let pipe = Pipe()
        first.standardOutput = pipe
        first.standardError = FileHandle.nullDevice
        let lines = LineCollector(pipe)
        try first.run()
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL); first.waitUntilExit() } }
        XCTAssertTrue(waitUntil(timeout: 30) { lines.objects.contains { $0["valid"] as? Bool == true } }, "\(lines.objects)")
        let second = try run([jas, "latency", "--server", server.name, "--count", "2", "--json"])
        XCTAssertEqual(second.status, 0, second.output)
        XCTAssertTrue(waitUntil(timeout: 30) { lines.objects.contains { $0["event"] as? String == "resumed" } }, "\(lines.objects)")
        let interrupted = try XCTUnwrap(lines.objects.first { $0["event"] as? String == "interrupted" }, "\(lines.objects)")
        XCTAssertTrue((interrupted["by"] as? String ?? "").hasPrefix("jas-latency"), "\(interrupted)")
        // Readings again after the interruption.
        let resumedAt = lines.objects.firstIndex { $0["event"] as? String == "resumed" }!
        XCTAssertTrue(waitUntil(timeout: 30) { lines.objects[(resumedAt + 1)...].contains { $0["valid"] as? Bool == true } },
                      "no valid reading after the interruption ended: \(lines.objects)")
        kill(first.processIdentifier, SIGINT)
        first.waitUntilExit()
        XCTAssertEqual(first.terminationStatus, 130)
    }
}
