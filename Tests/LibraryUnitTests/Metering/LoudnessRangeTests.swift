import Foundation
import JackTestSupport
import XCTest

/// Loudness range is a number only once something was measured: no 0.0 LU
/// beside an integrated loudness that is still null (libebur128 says 0 then).
final class LoudnessRangeTests: JackTestCase {
    private func summary(of file: String) throws -> [String: Any] {
        let result = try run([jas, "meter", "--file", file, "--json"])
        XCTAssertEqual(result.status, 0, result.output)
        let lines = result.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return try XCTUnwrap(lines.last { $0["event"] as? String == "summary" }, result.output)
    }

    func testRangeIsNullUntilAShortTermBlockPassedTheGates() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func make(_ name: String, _ effect: [String]) throws -> String {
            let path = "\(folder)/\(name).wav"
            XCTAssertEqual(try run(["sox", "-n", "-r", "48000", "-c", "2", "-b", "32", "-e", "float", path] + effect).status, 0)
            return path
        }
        let silence = try summary(of: try make("silence", ["trim", "0", "5"]))
        XCTAssertTrue(silence["integrated_lufs"] is NSNull, "\(silence)")
        XCTAssertTrue(silence["lra_lu"] is NSNull, "silence has no loudness range: \(silence)")
        let short = try summary(of: try make("short", ["synth", "1", "sine", "1000", "vol", "0.1"]))
        XCTAssertNotNil(short["integrated_lufs"] as? Double, "\(short)")
        XCTAssertTrue(short["lra_lu"] is NSNull, "1 s holds no 3 s block: \(short)")
        let steady = try summary(of: try make("steady", ["synth", "6", "sine", "1000", "vol", "0.1"]))
        XCTAssertEqual(try XCTUnwrap(steady["lra_lu"] as? Double, "\(steady)"), 0, accuracy: 0.1, "a steady tone's range is 0 LU")
    }
}
