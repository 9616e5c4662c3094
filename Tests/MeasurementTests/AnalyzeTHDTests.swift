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
    /// on two levels.
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
        }
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
