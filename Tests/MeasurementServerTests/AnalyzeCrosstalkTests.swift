import Foundation
import JackTestSupport
import XCTest

/// `jas analyze crosstalk` as a user runs it: a two-channel device in its
/// own process whose channels leak into each other at -80 dB flat plus
/// -60 dB through a band-pass at 10 kHz (scipy's iirpeak), against scipy's
/// freqz of the same leak; and the bit-exact loopback, which leaks nothing.
final class AnalyzeCrosstalkTests: JackTestCase {
    private func crosstalk(_ arguments: [String]) throws -> [String: Any] {
        let run = try run([jas, "analyze", "crosstalk", "--json"] + arguments, timeout: 120)
        XCTAssertEqual(run.status, 0, run.output)
        return try XCTUnwrap(jsonLines(run.output).first { $0["event"] as? String == "crosstalk" }, run.output)
    }

    /// Both directions within 0.5 dB of scipy at 997 Hz and at every
    /// 1/3-octave point of the sweep; the channels match exactly.
    func testAKnownLeakIsScipysWithinHalfADecibel() throws {
        let server = try startServer(period: 256, realtime: true)
        let parameters = String(decoding: try scipyReference("leakage-scipy.py", ["sections"]), as: UTF8.self).split(separator: " ")
            .map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        let device = try TestProgram.leakage.start([server.name, "leak"] + parameters)
        defer { device.terminate(); device.waitUntilExit() }
        let result = try crosstalk(["--server", server.name, "--out", "leak:in_1", "--in", "leak:out_1",
                                    "--out", "leak:in_2", "--in", "leak:out_2"])
        XCTAssertEqual(try XCTUnwrap(result["gain_match_db"] as? Double), 0, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(result["phase_match_deg"] as? Double), 0, accuracy: 0.01)
        let leaks = try XCTUnwrap(result["leaks"] as? [[String: Any]])
        XCTAssertEqual(leaks.count, 2)
        var worst = 0.0
        for leak in leaks {
            let points = try XCTUnwrap(leak["response"] as? [[String: Double]])
            let frequencies = points.compactMap { $0["frequency_hz"] }.map { String(format: "%.3f", $0) }
            let expected = try scipyFigures("leakage-scipy.py", ["crosstalk", "997"] + frequencies)
            XCTAssertEqual(try XCTUnwrap(leak["crosstalk_db"] as? Double), try XCTUnwrap(expected["997"]), accuracy: 0.5, "\(leak)")
            for (point, key) in zip(points, frequencies) {
                let measured = try XCTUnwrap(point["crosstalk_db"], "\(point)")
                XCTAssertEqual(measured, try XCTUnwrap(expected[key]), accuracy: 0.5, "\(key) Hz")
                worst = max(worst, abs(measured - expected[key]!))
            }
        }
        print("AnalyzeCrosstalkTests: the leak within \(worst) dB of scipy at every point")
    }

    /// The -L loopback leaks nothing: no crosstalk figure at all (null, not a floor), the channels match.
    func testTheBitExactLoopbackLeaksNothing() throws {
        let result = try crosstalk(["--length", "1s"])
        for leak in try XCTUnwrap(result["leaks"] as? [[String: Any]]) {
            XCTAssertTrue(leak["crosstalk_db"] is NSNull, "\(leak)")
            XCTAssertTrue((leak["response"] as? [[String: Any]] ?? []).allSatisfy { $0["crosstalk_db"] is NSNull }, "\(leak)")
        }
        XCTAssertEqual(result["gain_match_db"] as? Double, 0)
        let one = try run([jas, "analyze", "crosstalk", "--out", "loopback:playback_1", "--in", "loopback:capture_1"])
        XCTAssertEqual(one.status, 64, one.output)
        XCTAssertTrue(one.output.contains("two channels or more"), one.output)
    }
}
