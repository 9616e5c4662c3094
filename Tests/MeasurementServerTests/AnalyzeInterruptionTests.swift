import Foundation
import JackTestSupport
import XCTest

/// A call during a measurement: `jas analyze response` is interrupted by
/// `jas interrupt` in the middle of its sweep. It says by whom, waits, plays
/// the spoilt run again once the call ends, and gives the loopback's true
/// response (flat), never one with the call's silence in it.
final class AnalyzeInterruptionTests: JackTestCase {
    func testACallPausesTheMeasurementWhichResumesAndGivesTheTrueFigure() throws {
        let server = try startServer(period: 256, realtime: true)
        let analyzer = Process()
        analyzer.executableURL = URL(fileURLWithPath: jas)
        analyzer.arguments = ["analyze", "response", "--json", "--server", server.name, "--length", "6s"]
        let output = Pipe(), errors = Pipe()
        analyzer.standardOutput = output
        analyzer.standardError = errors
        let lines = LineCollector(output)
        let said = LineCollector.Text()
        said.read(errors)
        try analyzer.run()
        defer { if analyzer.isRunning { kill(analyzer.processIdentifier, SIGKILL); analyzer.waitUntilExit() } }
        XCTAssertTrue(waitUntil(timeout: 30) { said.text.contains("playing 1 of 2") }, said.text)
        // The sweep runs for 6 s: a one-second call lands in it.
        let call = try run([jas, "interrupt", "--server", server.name, "--for", "1"], timeout: 60)
        XCTAssertEqual(call.status, 0, call.output)
        XCTAssertTrue(waitUntil(timeout: 60) { !analyzer.isRunning }, said.text)
        analyzer.waitUntilExit()
        _ = lines.waitForEnd()
        XCTAssertEqual(analyzer.terminationStatus, 0, said.text)
        XCTAssertTrue(said.text.contains("interrupted by jas-interrupt"), said.text)
        XCTAssertTrue(said.text.contains("resumed"), said.text)
        let events = lines.objects.compactMap { $0["event"] as? String }
        XCTAssertEqual(events, ["interrupted", "resumed", "response"], "\(lines.objects)")
        let response = try XCTUnwrap(lines.objects.last?["channels"] as? [[String: Any]]).first?["response"] as? [[String: Double]]
        for point in try XCTUnwrap(response) {
            XCTAssertEqual(try XCTUnwrap(point["magnitude_db"]), 0, accuracy: 0.001, "\(point)")
        }
    }
}
