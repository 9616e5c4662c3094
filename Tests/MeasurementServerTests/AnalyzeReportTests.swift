import Foundation
import JackTestSupport
import XCTest

/// `jas analyze all --limits FILE --report PAGE` on a private jackd's two
/// loopback pairs: the figures, one verdict, and a page a person opens
/// (graphs against frequency, the tables, the verdict first; no script, no
/// network).
final class AnalyzeReportTests: JackTestCase {
    func testAllMeasurementsMakeOnePageWithGraphsTablesAndTheVerdict() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let limits = "\(folder)/line.yaml", page = "\(folder)/report.html"
        try """
            response: {deviation_db: {max: 0.01}}
            thd: {thd_n_db: {max: -120}}
            noise: {dynamic_range_a_db: {min: 150}}
            imd: {smpte_db: {max: -120}}
            crosstalk: {crosstalk_db: {max: -150}, gain_match_db: {max: 0.001}}
            """.write(toFile: limits, atomically: true, encoding: .utf8)
        let run = try run([jas, "analyze", "all", "--json", "--out", "loopback:playback_1", "--in", "loopback:capture_1",
                           "--out", "loopback:playback_2", "--in", "loopback:capture_2", "--limits", limits, "--report", page],
                          timeout: 300)
        XCTAssertEqual(run.status, 0, run.output)
        let events = jsonLines(run.output).compactMap { $0["event"] as? String }
        XCTAssertEqual(events, ["response", "thd", "noise", "imd", "crosstalk", "verdict"], run.output)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        for id in ["verdict", "response-magnitude", "response-phase", "noise-floor", "thd-frequency", "thd", "thd-residual", "noise",
                   "noise-spectrum", "imd", "crosstalk"] {
            XCTAssertTrue(html.contains("id=\"\(id)\""), "no \(id) on the page")
        }
        // The loopback leaks nothing and is silent when idle: the crosstalk, noise floor and noise spectrum graphs have no
        // line (digital silence is not drawn); the response two, the THD+N residual (the float path's rounding) one.
        XCTAssertEqual(html.components(separatedBy: "data-series=\"loopback:capture_1\"").count - 1, 3,
                       "the first channel's magnitude, phase and THD+N residual")
        XCTAssertFalse(html.contains("id=\"crosstalk-frequency\"") && html.contains("into loopback:capture_2\" fill"),
                       "a line drawn for digital silence")
        XCTAssertTrue(html.contains(">PASS<"), "the verdict")
        XCTAssertFalse(html.lowercased().contains("<script"))
        XCTAssertFalse(html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").contains("http"), "a link off the page")
    }
}
