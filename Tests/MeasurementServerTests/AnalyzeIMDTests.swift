import Foundation
import JackTestSupport
@testable import Measurement
import XCTest

/// `jas analyze imd` as a user runs it: a memoryless polynomial in its own
/// process, whose products are known in closed form, through every test.
final class AnalyzeIMDTests: JackTestCase {
    func testAPolynomialDevicesIMDIsTheClosedFormInEveryTest() throws {
        // Real-time, as for the stepped sine: a starved -r server spoils runs.
        let server = try startServer(period: 256, realtime: true)
        let (a2, a3) = (0.02, 0.005)
        let device = try TestProgram.polynomial.start([server.name, "dut", String(a2), String(a3)])
        defer { device.terminate(); device.waitUntilExit() }
        let run = try run([jas, "analyze", "imd", "--json", "--server", server.name, "--out", "dut:in", "--in", "dut:out",
                           "--level", "-3dBFS"], timeout: 120)
        XCTAssertEqual(run.status, 0, run.output)
        let result = try XCTUnwrap(jsonLines(run.output).first { $0["event"] as? String == "imd" }, run.output)
        let channel = try XCTUnwrap((result["channels"] as? [[String: Any]])?.first)
        let tests = try XCTUnwrap(channel["tests"] as? [[String: Any]])
        XCTAssertEqual(tests.compactMap { $0["test"] as? String }, ["smpte", "din", "ccif"])
        for entry in tests {
            let test = try XCTUnwrap(IntermodulationTest(rawValue: try XCTUnwrap(entry["test"] as? String)))
            let expected = IntermodulationClosedForm(test: test, a2: a2, a3: a3, levelDBFS: -3)
            XCTAssertEqual(try XCTUnwrap(entry["imd_db"] as? Double), expected.dB, accuracy: 0.05, "\(test)")
            XCTAssertEqual(try XCTUnwrap(entry["d2_db"] as? Double), 20 * log10(expected.orders[2]!), accuracy: 0.05, "\(test)")
            XCTAssertEqual(try XCTUnwrap(entry["d3_db"] as? Double), 20 * log10(expected.orders[3]!), accuracy: 0.05, "\(test)")
            XCTAssertNotNil(entry["definition"] as? String)
            print("AnalyzeIMDTests: \(test) \(entry["imd_db"]!) dB (closed form \(expected.dB))")
        }
    }
}
