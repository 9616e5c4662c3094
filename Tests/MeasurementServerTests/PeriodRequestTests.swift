import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import XCTest

/// A check must not reconfigure a running server unless asked: `jas selftest`
/// and `jas latency` run at the server's period and say so; `--period` asks
/// for another, and the output says every client now runs at it.
final class PeriodRequestTests: JackTestCase {
    func testSelftestAndLatencyLeaveARunningServersPeriodAloneUnlessAsked() throws {
        let server = try startServer(period: 64)
        let observer = try Client(name: "observer", serverName: server.name)
        defer { observer.close() }

        let selftest = try run([jas, "selftest", "--server", server.name, "--duration", "1", "--json"])
        // Whether it passes at 64 frames depends on xruns on this machine; the period is what is checked here.
        let report = try XCTUnwrap(selftest.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.last, selftest.output)
        XCTAssertEqual(report["period_frames"] as? Int, 64)
        XCTAssertTrue(report["period_requested"] is NSNull, "\(report)")
        XCTAssertEqual(observer.bufferSize, 64, "jas selftest changed the server's period")

        let latency = try run([jas, "latency", "--server", server.name, "--count", "1"])
        XCTAssertTrue(latency.output.contains("period 64 frames, the server's own"), latency.output)
        XCTAssertEqual(observer.bufferSize, 64, "jas latency changed the server's period")

        let asked = try run([jas, "selftest", "--server", server.name, "--duration", "1", "--period", "128"])
        XCTAssertTrue(asked.output.contains("period 128 frames"), asked.output)
        XCTAssertTrue(asked.output.contains("requested with --period 128: every client on this server now runs at it"),
                      asked.output)
        XCTAssertTrue(waitUntil { observer.bufferSize == 128 }, "the request reached the server")
    }
}
