import Foundation
@testable import Measurement
import XCTest

/// Limits files as a production line writes them: what is read, what is
/// refused (with the name and what there is), and how figures are judged.
final class AnalyzerLimitsTests: XCTestCase {
    func testALimitsFileIsReadPerMeasurementAndFigure() throws {
        let limits = try AnalyzerLimits(yaml: """
            # a line's limits
            thd:
              gain_db: {min: -0.1, max: 0.1}
              thd_n_db: {max: -90}
            noise:
              dynamic_range_a_db: {min: 96}
            """, source: "line.yaml")
        XCTAssertEqual(limits.bounds["thd"]?["gain_db"], .init(min: -0.1, max: 0.1))
        XCTAssertEqual(limits.bounds["thd"]?["thd_n_db"], .init(min: nil, max: -90))
        XCTAssertEqual(limits.bounds["noise"]?["dynamic_range_a_db"], .init(min: 96, max: nil))
    }

    func testWhatCannotBeALimitIsRefusedWithTheNameAndWhatThereIs() {
        let cases: [(String, [String])] = [
            ("thd:\n  thdn_db: {max: -90}\n", ["'thdn_db' is not a figure of thd", "thd_n_db"]),
            ("distortion:\n  thd_db: {max: -90}\n", ["'distortion' is not a measurement",
                                                    AnalyzerLimits.figures.keys.sorted().joined(separator: ", ")]),
            ("thd:\n  thd_db: {}\n", ["thd.thd_db has neither min nor max"]),
            ("thd:\n  gain_db: {min: 1, max: -1}\n", ["min 1.0 above max -1.0"]),
            ("- just a list\n", ["not a limits file"]),
        ]
        for (yaml, phrases) in cases {
            XCTAssertThrowsError(try AnalyzerLimits(yaml: yaml, source: "bad.yaml"), yaml) { error in
                let message = String(describing: error)
                XCTAssertTrue(message.hasPrefix("bad.yaml: "), message)
                for phrase in phrases { XCTAssertTrue(message.contains(phrase), "\(phrase) not in: \(message)") }
            }
        }
    }

    func testFiguresAreJudgedAgainstTheirBoundsSilenceAsTheInfinityItIs() throws {
        let limits = try AnalyzerLimits(yaml: "noise:\n  noise_a_dbfs: {max: -100}\n  snr_db: {min: 100}\n  dynamic_range_a_db: {min: 96}\n",
                                        source: "l.yaml")
        let silent = ("out", "in", ["noise_a_dbfs": -Double.infinity, "snr_db": Double.infinity, "dynamic_range_a_db": 198.0])
        let noisy = ("out2", "in2", ["noise_a_dbfs": -96.2, "snr_db": 94.1, "dynamic_range_a_db": 96.1])
        let rows = AnalyzerVerdict.rows(limits, measurement: "noise", channels: [silent, noisy])
        XCTAssertEqual(rows.map(\.figure), ["dynamic_range_a_db", "noise_a_dbfs", "snr_db", "dynamic_range_a_db", "noise_a_dbfs", "snr_db"])
        XCTAssertEqual(rows.map(\.passed), [true, true, true, true, false, false])
        XCTAssertFalse(AnalyzerVerdict(rows: rows, source: "l.yaml").passed)
        // A limited figure the measurement did not give is not measured, and fails.
        let missing = AnalyzerVerdict.rows(limits, measurement: "noise", channels: [("o", "i", [:])])
        XCTAssertTrue(missing.allSatisfy { $0.value.isNaN && !$0.passed })
        XCTAssertTrue(AnalyzerVerdict.rows(limits, measurement: "thd", channels: [silent]).isEmpty)
    }
}
