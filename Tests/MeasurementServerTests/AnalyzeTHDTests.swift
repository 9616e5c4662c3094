import Foundation
import JackTestSupport
import XCTest

/// `jas analyze thd` as a user runs it, on real jackd servers: the bit-exact
/// loopback, a memoryless polynomial (a JACK client in its own process) whose
/// harmonics are known in closed form, and what it says and exits with when
/// it cannot measure.
final class AnalyzeTHDTests: JackTestCase {
    private func dB(_ ratio: Double) -> Double { 20 * log10(ratio) }

    /// The one JSON line of a run, and its channels.
    private func measure(_ arguments: [String], file: StaticString = #filePath,
                         line: UInt = #line) throws -> (result: [String: Any], channels: [[String: Any]]) {
        let run = try run([jas, "analyze", "thd", "--json"] + arguments, timeout: 120, file: file, line: line)
        XCTAssertEqual(run.status, 0, run.output, file: file, line: line)
        let result = try XCTUnwrap(jsonLines(run.output).first { $0["event"] as? String == "thd" }, run.output,
                                   file: file, line: line)
        return (result, try XCTUnwrap(result["channels"] as? [[String: Any]], file: file, line: line))
    }

    /// jackd's -L loopback, on a private server (no --server): a gain of
    /// exactly 0 dB, no harmonic above -150 dBFS, and the float path's own
    /// THD+N floor reported as a number.
    func testTheBitExactLoopbackIsFlatAndHasNoHarmonicAboveMinus150DBFS() throws {
        let (result, channels) = try measure([])
        XCTAssertEqual(result["frequency_hz"] as? Double, 997)
        XCTAssertEqual(result["level_convention"] as? String, "dBFS per AES17: a full-scale sine is 0 dBFS")
        let channel = try XCTUnwrap(channels.first)
        XCTAssertEqual(try XCTUnwrap(channel["gain_db"] as? Double), 0, accuracy: 0.001)
        let harmonics = try XCTUnwrap(channel["harmonics"] as? [[String: Any]])
        XCTAssertEqual(harmonics.compactMap { $0["order"] as? Int }, Array(2...9))
        for harmonic in harmonics {
            // A harmonic below what a double can tell is null, and below -150 too.
            if let level = harmonic["level_dbfs"] as? Double { XCTAssertLessThan(level, -150, "\(harmonic)") }
        }
        let floor = try XCTUnwrap(channel["thd_n_db"] as? Double, "the float path's THD+N floor is a figure")
        XCTAssertLessThan(floor, -120)
        print("AnalyzeTHDTests: the float path's THD+N floor at 997 Hz, -1 dBFS: \(floor) dB")
    }

    /// y = x + a2·x² + a3·x³ in a process of its own: the fundamental's gain,
    /// the 2nd and 3rd harmonics and THD within 0.05 dB of the closed forms,
    /// on two levels, and the residual spectrum's band of the 2nd harmonic.
    func testAPolynomialDevicesHarmonicsAreTheClosedForms() throws {
        // Real-time, as a measuring engineer runs it: beside the other shard, a -r server spoilt
        // every one of three runs with 7 to 17 xruns in a CI run.
        let server = try startServer(period: 256, realtime: true)
        let (a2, a3) = (0.02, 0.005)
        let device = try TestProgram.polynomial.start([server.name, "dut", String(a2), String(a3)])
        defer { device.terminate(); device.waitUntilExit() }
        for level in [-1.0, -12.0] {
            let (_, channels) = try measure(["--server", server.name, "--out", "dut:in", "--in", "dut:out",
                                             "--level", "\(level)dBFS"])
            let channel = try XCTUnwrap(channels.first)
            let amplitude = pow(10, level / 20)
            let fundamental = amplitude + 0.75 * a3 * pow(amplitude, 3)
            let second = a2 * amplitude * amplitude / 2, third = a3 * pow(amplitude, 3) / 4
            XCTAssertEqual(try XCTUnwrap(channel["gain_db"] as? Double), dB(fundamental / amplitude), accuracy: 0.05, "\(level)")
            let harmonics = try XCTUnwrap(channel["harmonics"] as? [[String: Any]])
            func levelDB(_ order: Int) throws -> Double {
                try XCTUnwrap(harmonics.first { $0["order"] as? Int == order }?["level_db"] as? Double)
            }
            XCTAssertEqual(try levelDB(2), dB(second / fundamental), accuracy: 0.05, "\(level) dBFS")
            XCTAssertEqual(try levelDB(3), dB(third / fundamental), accuracy: 0.05, "\(level) dBFS")
            let thd = (second * second + third * third).squareRoot() / fundamental
            XCTAssertEqual(try XCTUnwrap(channel["thd_db"] as? Double), dB(thd), accuracy: 0.05, "\(level) dBFS")
            XCTAssertEqual(try XCTUnwrap(channel["thd_percent"] as? Double), thd * 100, accuracy: thd * 100 * 0.006)
            // Nothing else in the band: THD+N is THD (and the float floor, far below).
            XCTAssertEqual(try XCTUnwrap(channel["thd_n_db"] as? Double), dB(thd), accuracy: 0.05, "\(level) dBFS")
            // The residual's spectrum: the 1/12-octave band that holds 2 × 997 Hz holds the 2nd harmonic alone.
            let bands = try XCTUnwrap(channel["residual_spectrum"] as? [[String: Any]])
            let secondsBand = try XCTUnwrap(bands.first { ($0["low_hz"] as? Double ?? 0) <= 1994 && ($0["high_hz"] as? Double ?? 0) >= 1994 })
            XCTAssertEqual(try XCTUnwrap(secondsBand["level_dbfs"] as? Double), dB(second), accuracy: 0.05, "\(level) dBFS: \(secondsBand)")
        }
    }

    /// THD+N against level on y = x + a2·x² + a3·x³ (its own process): each
    /// step within 0.05 dB of the closed form, and the maximum level (THD+N
    /// 1 %) within 0.05 dB of where the closed form reaches it (found by
    /// bisection); a limit on it gives its verdict, and the report draws it.
    func testTHDNAgainstLevelAndTheMaximumLevelAreTheClosedForms() throws {
        let server = try startServer(period: 256, realtime: true)
        let (a2, a3) = (0.1, 0.02)
        let device = try TestProgram.polynomial.start([server.name, "dut", String(a2), String(a3)])
        defer { device.terminate(); device.waitUntilExit() }
        func thdN(_ level: Double) -> Double {
            let amplitude = pow(10, level / 20)
            let fundamental = amplitude + 0.75 * a3 * pow(amplitude, 3)
            return (pow(a2 * amplitude * amplitude / 2, 2) + pow(a3 * pow(amplitude, 3) / 4, 2)).squareRoot() / fundamental
        }
        var (low, high) = (-40.0, 0.0)
        while high - low > 1e-6 {
            let middle = (low + high) / 2
            if thdN(middle) < 0.01 { low = middle } else { high = middle }
        }
        let maximum = low
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let limits = "\(folder)/limits.yaml", page = "\(folder)/report.html"
        try "thd_vs_level:\n  max_level_dbfs: {min: \(maximum - 1)}\n".write(toFile: limits, atomically: true, encoding: .utf8)
        let measured = try run([jas, "analyze", "thd", "--json", "--server", server.name, "--out", "dut:in", "--in", "dut:out",
                                "--level", "-20dBFS", "--up-to", "-8dBFS", "--step", "2dB", "--limits", limits, "--report", page],
                               timeout: 120)
        XCTAssertEqual(measured.status, 0, measured.output)
        let lines = jsonLines(measured.output)
        let result = try XCTUnwrap(lines.first { $0["event"] as? String == "thd_vs_level" }, measured.output)
        let channel = try XCTUnwrap((result["channels"] as? [[String: Any]])?.first)
        let steps = try XCTUnwrap(channel["steps"] as? [[String: Any]])
        XCTAssertEqual(steps.compactMap { $0["level_dbfs"] as? Double }, [-20, -18, -16, -14, -12, -10, -8])
        for step in steps {
            let level = try XCTUnwrap(step["level_dbfs"] as? Double)
            XCTAssertEqual(try XCTUnwrap(step["thd_n_db"] as? Double), dB(thdN(level)), accuracy: 0.05, "\(level) dBFS")
        }
        XCTAssertEqual(channel["max_level"] as? String, "crossed")
        XCTAssertEqual(try XCTUnwrap(channel["max_level_dbfs"] as? Double), maximum, accuracy: 0.05)
        print("AnalyzeTHDTests: maximum level \(channel["max_level_dbfs"] ?? "none") dBFS, closed form \(maximum)")
        let verdict = try XCTUnwrap(lines.first { $0["event"] as? String == "verdict" }, measured.output)
        XCTAssertEqual(verdict["passed"] as? Bool, true)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        XCTAssertTrue(html.contains("<svg id=\"thd-n-level\""), "the report draws THD+N against level")
        XCTAssertEqual(html.components(separatedBy: "class=\"series\" data-series=\"dut:out\"").count - 1, 1, html)
    }

    /// A port that does not exist, an input nothing feeds, a level above full
    /// scale: no figure, the port or the option named, and exit status 2 (64
    /// for a usage error).
    func testWhatCannotBeMeasuredSaysWhyAndExitsTwo() throws {
        let server = try startServer(period: 256)
        let missing = try run([jas, "analyze", "thd", "--server", server.name, "--out", "loopback:playback_1",
                               "--in", "loopback:capture_9"])
        XCTAssertEqual(missing.status, 2, missing.output)
        XCTAssertTrue(missing.output.contains("loopback:capture_9"), missing.output)
        XCTAssertFalse(missing.output.contains("\"event\":\"thd\""), missing.output)
        // capture_2 is fed by playback_2, which nothing plays into.
        let unfed = try run([jas, "analyze", "thd", "--server", server.name, "--out", "loopback:playback_1",
                             "--in", "loopback:capture_2", "--json"])
        XCTAssertEqual(unfed.status, 2, unfed.output)
        XCTAssertTrue(unfed.output.contains("no tone came back on 'loopback:capture_2' from 'loopback:playback_1'"), unfed.output)
        XCTAssertFalse(unfed.output.contains("\"event\":\"thd\""), "no number from a measurement that was spoilt: \(unfed.output)")
        let loud = try run([jas, "analyze", "thd", "--level", "+3dBFS"])
        XCTAssertEqual(loud.status, 64, loud.output)
        XCTAssertTrue(loud.output.contains("--level must be a level of at most 0 dBFS"), loud.output)
    }
}

/// `--limits` on a device whose THD is known: a file it meets exits 0, one it
/// misses exits 1 with the failing figure in the verdict, and a path that
/// cannot be measured exits 2 with no verdict.
final class AnalyzeLimitsTests: JackTestCase {
    func testAVerdictPassesFailsOrCannotBeGiven() throws {
        let server = try startServer(period: 256, realtime: true)
        let (a2, a3) = (0.02, 0.005)
        let device = try TestProgram.polynomial.start([server.name, "dut", String(a2), String(a3)])
        defer { device.terminate(); device.waitUntilExit() }
        // The closed form at -1 dBFS (AnalyzeTHDTests): THD of the 2nd and 3rd harmonics.
        let amplitude = pow(10, -1.0 / 20)
        let fundamental = amplitude + 0.75 * a3 * pow(amplitude, 3)
        let thd = 20 * log10((pow(a2 * amplitude * amplitude / 2, 2) + pow(a3 * pow(amplitude, 3) / 4, 2)).squareRoot() / fundamental)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func limits(_ name: String, thdMax: Double) throws -> String {
            let path = "\(folder)/\(name).yaml"
            try "thd:\n  thd_db: {max: \(thdMax)}\n  gain_db: {min: -1, max: 1}\nimd:\n  smpte_db: {max: -20}\n"
                .write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let arguments = ["analyze", "thd", "--server", server.name, "--out", "dut:in", "--in", "dut:out"]
        let pass = try run([jas] + arguments + ["--limits", try limits("pass", thdMax: thd + 1)], timeout: 120)
        XCTAssertEqual(pass.status, 0, pass.output)
        XCTAssertTrue(pass.output.contains("PASS: all 2 figures within their limits"), pass.output)
        let fail = try run([jas] + arguments + ["--json", "--limits", try limits("fail", thdMax: thd - 1)], timeout: 120)
        XCTAssertEqual(fail.status, 1, fail.output)
        let verdict = try XCTUnwrap(jsonLines(fail.output).first { $0["event"] as? String == "verdict" }, fail.output)
        XCTAssertEqual(verdict["passed"] as? Bool, false)
        let rows = try XCTUnwrap(verdict["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.filter { $0["passed"] as? Bool == false }.compactMap { $0["figure"] as? String }, ["thd_db"])
        XCTAssertEqual(try XCTUnwrap(rows.first { $0["figure"] as? String == "thd_db" }?["value"] as? Double), thd, accuracy: 0.05)
        let unmeasurable = try run([jas, "analyze", "thd", "--server", server.name, "--out", "loopback:playback_1",
                                    "--in", "loopback:capture_2", "--limits", try limits("any", thdMax: 0)], timeout: 120)
        XCTAssertEqual(unmeasurable.status, 2, unmeasurable.output)
        XCTAssertTrue(unmeasurable.output.contains("'loopback:capture_2'"), unmeasurable.output)
        XCTAssertFalse(unmeasurable.output.contains("PASS") || unmeasurable.output.contains("FAIL"), unmeasurable.output)
        // A file with no limits for the measurement run is a usage error, before anything runs.
        let other = "\(folder)/other.yaml"
        try "noise:\n  snr_db: {min: 90}\n".write(toFile: other, atomically: true, encoding: .utf8)
        let unrelated = try run([jas] + arguments + ["--limits", other], timeout: 60)
        XCTAssertEqual(unrelated.status, 64, unrelated.output)
        XCTAssertTrue(unrelated.output.contains("has no limits for thd"), unrelated.output)
    }
}
