import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
@testable import Measurement
import XCTest

/// The latency JACK reports for a measured path is either right or says it is
/// not known, and a calibration stores nothing it cannot stand behind.
///
/// On jackd's `-L` loopback the session's outputs come back to its inputs: a
/// cycle in the graph, for which jackd runs no latency callback about one start
/// in three on a loaded machine, and the session's own ports then read 0. The
/// session's reported latency is the connected ports' ranges (what its callback
/// gives them), so it no longer reads 0 there.
final class LatencyTrustTests: JackTestCase {
    /// What JACK's ranges for the loopback ports themselves say, frames: capture plus playback.
    private func hardwareRoundTrip(_ server: LoopbackServer) throws -> Int {
        let client = try Client(name: "latency-trust-probe", serverName: server.name)
        defer { client.close() }
        let capture = try XCTUnwrap(client.port(named: "loopback:capture_1")).latencyRange(.capture).max
        let playback = try XCTUnwrap(client.port(named: "loopback:playback_1")).latencyRange(.playback).max
        XCTAssertGreaterThan(capture + playback, 0, "jackd reports the loopback ports' latency")
        return capture + playback
    }

    func testEveryStartOnALoadedServerReportsTheLoopbackPortsLatencyNeverZero() throws {
        let server = try startServer(loopbackChannels: 1, period: 256)
        let expected = try hardwareRoundTrip(server)
        let load = try BusyCore()
        defer { load.stop() }
        let store = LatencyCalibrationStore(path: temporaryFolder() + "/none.json")
        var unsettled = 0
        for start in 1...8 {
            var configuration = LatencyMeter.Configuration(serverName: server.name, outputPort: "loopback:playback_1",
                                                           inputPort: "loopback:capture_1")
            configuration.calibration = store
            let meter = LatencyMeter(configuration: configuration)
            try meter.start()
            defer { meter.stop() }
            // Until a valid reading, or as long as `jas latency` would wait: 60 readings spoilt by
            // xruns (beside a busy core, this test's own load made the first 20 all spoilt), or 20
            // that found nothing for another reason.
            var reading: LatencyReading?
            var (spoilt, other) = (0, 0)
            while spoilt < 60 && other < 20, let next = meter.nextReading(timeout: 10) {
                if next.valid && next.reportedProblem == nil { reading = next; break }
                if next.problem == .xrun { spoilt += 1 } else { other += 1 }
            }
            let valid = try XCTUnwrap(reading, "start \(start): no valid reading (\(spoilt) spoilt by xruns, \(other) other)")
            XCTAssertEqual(valid.reportedFrames, expected, "start \(start): \(valid)")
            XCTAssertEqual(valid.excessFrames ?? .nan, (valid.measuredFrames ?? .nan) - Double(expected), accuracy: 1e-6)
            XCTAssertEqual(try meter.session.inputLatencyRange.max + meter.session.outputLatencyRange.max, expected)
            if !valid.reportedSettled { unsettled += 1 }
        }
        print("loopback under load: JACK ran no latency callback for the session in \(unsettled) of 8 starts")
    }

    func testALatencyThatChangesDuringAWindowIsFlaggedAndCarriesNoNumber() throws {
        let server = try startServer(period: 256)
        let rig = try SimulatedDevice(name: "rig", serverName: server.name, type: .usbAudio, channels: 1,
                                      captureLatency: 100, playbackLatency: 200)
        defer { rig.unplug() }
        // A silent second source with a larger capture latency: a delay line
        // fed by the dummy backend's silent system:capture_1 (a period, 256
        // frames, as JACK passes it on). Connected to the session's input as
        // well, it moves the input's range from 100 to 256 frames.
        let far = try DelayLineClient(name: "far", serverName: server.name, delay: 32)
        try far.listen(to: "system:capture_1")
        var configuration = LatencyMeter.Configuration(serverName: server.name, outputPort: "rig:playback_1",
                                                       inputPort: "rig:capture_1")
        configuration.calibration = LatencyCalibrationStore(path: temporaryFolder() + "/none.json")
        let meter = LatencyMeter(configuration: configuration)
        try meter.start()
        defer { meter.stop() }
        let before = try XCTUnwrap((0..<20).lazy.compactMap { _ in meter.nextReading(timeout: 10) }.first { $0.valid })
        XCTAssertEqual(before.reportedFrames, 300)
        let input = try XCTUnwrap(meter.session.client?.port(named: "jas-latency:in_1")?.name)
        let helper = try Client(name: "latency-trust-connector", serverName: server.name)
        defer { helper.close() }
        try helper.connect("far:out", to: input)
        var readings: [LatencyReading] = []
        // Until the new latency is read in a window that holds (a loaded machine's xruns spoil some).
        while !readings.contains(where: { $0.reportedFrames == 456 && $0.valid }), readings.count < 30,
              let next = meter.nextReading(timeout: 10) {
            readings.append(next)
        }
        XCTAssertTrue(readings.contains { $0.reportedProblem == .changed }, "\(readings.map { ($0.reportedFrames, $0.reportedProblem) })")
        for reading in readings {
            if reading.reportedProblem != nil {
                XCTAssertNil(reading.reportedFrames)
                XCTAssertNil(reading.excessFrames)
            } else {
                XCTAssertTrue([300, 456].contains(reading.reportedFrames ?? -1), "\(reading)")
            }
        }
        XCTAssertTrue(readings.contains { $0.reportedFrames == 456 && $0.valid }, "the new latency once settled")
    }

    func testRepeatedCalibrationOnALoadedLoopbackStoresOneCorrectionThatHolds() throws {
        let directory = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try startServer(loopbackChannels: 1, period: 256)
        let reported = try hardwareRoundTrip(server)
        let load = try BusyCore()
        defer { load.stop() }
        let arguments = [jas, "latency", "--server", server.name, "--count", "3", "--calibrate"]
        for run in 1...4 {
            let result = try self.run(arguments, environment: ["XDG_CONFIG_HOME": directory])
            XCTAssertEqual(result.status, 0, "run \(run): \(result.output)")
            XCTAssertTrue(result.output.contains("behind the ports: jackd's -L loopback"), result.output)
            XCTAssertTrue(result.output.contains("software loopback"), result.output)
            let data = try XCTUnwrap(FileManager.default.contents(atPath: directory + "/jackaudiosession/latency-calibration.json"))
            let stored = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: [String: [String: Int]]])
            let capture = try XCTUnwrap(stored[server.name]?["capture"]?["loopback:capture_1"])
            let playback = try XCTUnwrap(stored[server.name]?["playback"]?["loopback:playback_1"])
            // The loopback returns the signal one period later: the whole
            // correction is that period less what JACK reports.
            XCTAssertEqual(capture + playback, 256 - reported, "run \(run): \(result.output)")
        }
    }

    func testCalibrationRefusesReadingsThatDisagreeOrHaveNoReportedLatency() {
        func reading(_ index: Int, measured: Double, reported: Int?, problem: ReportedLatencyProblem? = nil) -> LatencyReading {
            LatencyReading(index: index, valid: true, problem: nil, measuredFrames: measured, measuredMs: measured / 48,
                           reportedFrames: reported, reportedCaptureFrames: reported.map { $0 / 3 },
                           reportedPlaybackFrames: reported.map { $0 - $0 / 3 }, reportedProblem: problem,
                           reportedSettled: true, excessFrames: reported.map { measured - Double($0) }, inverted: false,
                           weakestToneDBFS: -6, toneSpreadFrames: 0, sampleRate: 48000, periodFrames: 256,
                           windowStartFrame: 0)
        }
        XCTAssertEqual(LatencyCalibrationDecision(readings: [reading(1, measured: 256, reported: 768),
                                                             reading(2, measured: 256.2, reported: 768),
                                                             reading(3, measured: 255.9, reported: 768)]),
                       .store(excessFrames: 256 - 768, reportedCapture: 256, reportedPlayback: 512))
        XCTAssertEqual(LatencyCalibrationDecision(readings: [reading(1, measured: 256, reported: 768),
                                                             reading(2, measured: 300, reported: 768)]),
                       .readingsDisagree(smallest: -512, largest: -468, tolerance: 1))
        XCTAssertEqual(LatencyCalibrationDecision(readings: [reading(1, measured: 256, reported: 768),
                                                             reading(2, measured: 256, reported: 0)]),
                       .reportedLatencyMoved(values: [0, 768]))
        let unknown = LatencyCalibrationDecision(readings: [reading(1, measured: 256, reported: nil, problem: .unknown),
                                                            reading(2, measured: 256, reported: nil, problem: .changed)])
        XCTAssertEqual(unknown, .nothingToStore(readings: 2))
        XCTAssertTrue(unknown.description.contains("none of the 2"), unknown.description)
    }
}
