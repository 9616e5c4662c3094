import Foundation
import JackTestSupport
import XCTest

/// Where a take's files go, and how their names are shown: a take to a device
/// writes no sidecar into /dev, and a name holding a newline is shown escaped.
final class RecordOutputNamesTests: JackTestCase {
    func testATakeToADeviceWritesNoLogBesideIt() throws {
        let server = try startServer(period: 256)
        unlink("/dev/null.log")
        let result = try run([jas, "record", "--server", server.name, "--ports", "loopback:capture_1",
                              "--output", "/dev/null", "--overwrite", "--for", "0.5", "--json"])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/dev/null.log"), "a sidecar was written into /dev")
        let summary = try XCTUnwrap(result.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.last { $0["event"] as? String == "summary" }, result.output)
        XCTAssertTrue(summary["log_path"] is NSNull, "\(summary)")
        XCTAssertEqual(summary["frames_written"] as? Int, 24000)
    }

    func testANewlineInANameIsShownEscaped() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/two\nlines.wav"
        let result = try run([jas, "record", "--server", server.name, "--ports", "loopback:capture_1",
                              "--output", path, "--for", "0.5"])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "the file has the name asked for")
        XCTAssertTrue(result.output.contains("two\\u{A}lines.wav"), result.output)
        XCTAssertFalse(result.output.split(separator: "\n").contains { $0.hasPrefix("lines.wav") }, result.output)
    }
}
