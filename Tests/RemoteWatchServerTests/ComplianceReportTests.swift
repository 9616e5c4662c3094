import Foundation
import JackTestSupport
import LoopbackHarness
import XCTest

/// `jas report` on a compliance log that a real `jas meter --log` wrote
/// through a tone in range, a silence, a tone 10 LU hot (an alarm) and a
/// jackd restart: the page opens in headless Chromium (screenshot kept in
/// .build/test-artifacts), its marks are where the log says, its hour row
/// is the log's hour line, and the CSV has a row per interval.
final class ComplianceReportTests: WatchTestCase {
    func testAReportShowsTheAlarmTheSilenceAndTheRestartWhereTheLogHasThem() throws {
        var server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = "\(folder)/compliance.jsonl"
        let (meter, lines, _) = try startWatched([
            "meter", "--server", server.name, "--ports", "loopback:capture_1", "--http", "127.0.0.1:0",
            "--log", log, "--log-interval", "1s", "--silence-hold", "2s", "--loudness", "r128", "--loudness-hold", "2s"])
        defer { if meter.isRunning { meter.terminate() } }
        func saw(_ event: String, count: Int = 1, timeout: Double = 30) -> Bool {
            waitUntil(timeout: timeout) { lines.objects.filter { $0["event"] as? String == event }.count >= count }
        }
        func readings() -> Int { lines.objects.filter { $0["event"] as? String == "reading" }.count }

        // In range (about −23 LUFS), then nothing (dead air), then 10 LU hot (an alarm).
        var player = try play(server, level: -20)
        let start = readings()
        XCTAssertTrue(waitUntil(timeout: 30) { readings() >= start + 50 }, "the meter reads")
        player.terminate()
        player.waitUntilExit()
        XCTAssertTrue(saw("silence"), "no silence: \(lines.objects.suffix(3))")
        player = try play(server, level: -10)
        defer { if player.isRunning { player.terminate() } }
        XCTAssertTrue(saw("signal") && saw("loudness_alarm"), "no alarm: \(lines.objects.filter { $0["event"] as? String != "reading" })")
        // The server restarts under the hot tone.
        server.kill()
        XCTAssertTrue(saw("mediaServicesWereLost"))
        server = try startServer(name: server.name, period: 256)
        XCTAssertTrue(saw("mediaServicesWereReset"))
        let back = readings()
        XCTAssertTrue(waitUntil(timeout: 30) { readings() >= back + 30 }, "the meter reads after the restart")
        meter.interrupt()
        meter.waitUntilExit()
        player.terminate()

        let logged = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let intervals = logged.filter { $0["event"] as? String == "interval" }
        XCTAssertGreaterThanOrEqual(intervals.count, 10)
        let hour = try XCTUnwrap(logged.last { $0["event"] as? String == "hour" }, "the hour under way is logged at the end")

        let page = "\(folder)/report.html", csv = "\(folder)/report.csv"
        let made = try run([jas, "report", log, "--output", page, "--csv", csv])
        XCTAssertEqual(made.status, 0, made.output)
        // One CSV row per interval line.
        let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(rows.first, "from,to,max_momentary_lufs,max_short_term_lufs,short_term_lufs,integrated_lufs,true_peak_dbtp,sample_peak_dbfs,paused")
        XCTAssertEqual(rows.count - 1, intervals.count)
        XCTAssertEqual(rows.dropFirst().map { String($0.prefix(24)) }, intervals.compactMap { $0["from"] as? String })

        // The page as a browser shows it.
        let artifacts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        let shot = artifacts.appendingPathComponent("compliance-report.png").path
        let seen = try probe(["report", page, shot], timeout: 90)
        XCTAssertTrue(FileManager.default.fileExists(atPath: shot))
        XCTAssertLessThan(seen["load_seconds"] as? Double ?? 99, 5)
        XCTAssertGreaterThan(seen["columns"] as? Int ?? 0, 100, "the short-term line is drawn: \(seen)")
        let alarms = seen["alarms"] as? [[String: Any]] ?? [], silences = seen["silences"] as? [[String: Any]] ?? []
        let gaps = seen["gaps"] as? [[String: Any]] ?? []
        XCTAssertEqual(alarms.count, logged.filter { $0["event"] as? String == "loudness_alarm" }.count, "\(alarms)")
        XCTAssertTrue(alarms.allSatisfy { $0["detail"] as? String == "too_loud" })
        // One silence; a second if the player came back after the meter by more than the hold at the restart.
        XCTAssertEqual(silences.count, logged.filter { $0["event"] as? String == "silence" }.count, "\(silences)")
        XCTAssertGreaterThanOrEqual(silences.count, 1)
        // Each mark where the log puts it: the silence before the alarm, the restart's gap inside the hot stretch.
        func time(_ text: Any?) -> Double {
            let format = ISO8601DateFormatter()
            format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return (text as? String).flatMap { format.date(from: $0) ?? ISO8601DateFormatter().date(from: $0) }?.timeIntervalSince1970 ?? 0
        }
        let lost = time(logged.first { $0["event"] as? String == "mediaServicesWereLost" }?["time"])
        let reset = time(logged.first { $0["event"] as? String == "mediaServicesWereReset" }?["time"])
        let restart = try XCTUnwrap(gaps.first { $0["detail"] as? String == "JACK server gone" }, "\(gaps)")
        XCTAssertEqual(time(restart["from"]), lost, accuracy: 0.002)
        XCTAssertEqual(time(restart["to"]), reset, accuracy: 0.002)
        let silenceEnd = time(silences.first?["to"]), signal = time(logged.first { $0["event"] as? String == "signal" }?["time"])
        XCTAssertEqual(silenceEnd, signal, accuracy: 0.002)
        XCTAssertLessThan(time(silences.first?["from"]), time(alarms.first?["from"]))
        XCTAssertLessThan(time(alarms.first?["from"]), lost)
        // The hour's row is the log's hour line.
        let hours = seen["hours"] as? [[String: Any]] ?? []
        let row = try XCTUnwrap(hours.first { $0["from"] as? String == hour["from"] as? String }, "\(hours) vs \(hour)")
        XCTAssertEqual(Double(row["integrated"] as? String ?? "") ?? 0, hour["integrated_lufs"] as? Double ?? 1, accuracy: 0.005)
    }

    /// `jas record --loudness`: the take's own meter raises the alarm, in its
    /// log and its JSON, and runs the command; `jas report` on the take's
    /// manifest gives a point per file.
    func testARecordingAlarmsOnWhatItWritesAndItsManifestMakesAReport() throws {
        let server = try startServer(period: 256)
        let player = try play(server, level: -10)
        defer { player.terminate() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let hooks = "\(folder)/hooks.txt"
        let recorder = Process()
        let output = Pipe()
        recorder.executableURL = URL(fileURLWithPath: jas)
        recorder.arguments = ["record", "--server", server.name, "--ports", "loopback:capture_1", "--output", "\(folder)/take-%H%M%S.wav",
                              "--utc", "--rotate", "2s", "--for", "7", "--json", "--loudness", "r128", "--loudness-hold", "1s",
                              "--on-loudness-alarm", "echo \"$JAS_EVENT $JAS_ALARM\" >> '\(hooks)'"]
        recorder.standardOutput = output
        let lines = LineCollector(output)
        try recorder.run()
        recorder.waitUntilExit()
        XCTAssertEqual(recorder.terminationStatus, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { lines.objects.contains { $0["event"] as? String == "summary" } || lines.objects.contains { $0["frames_written"] != nil } })
        let alarm = try XCTUnwrap(lines.objects.first { $0["event"] as? String == "loudness_alarm" }, "\(lines.objects.filter { $0["event"] as? String != "progress" })")
        XCTAssertEqual(alarm["alarm"] as? String, "too_loud")
        let summary = try XCTUnwrap(lines.objects.last { $0["manifest_path"] != nil })
        let log = try String(contentsOfFile: try XCTUnwrap(summary["log_path"] as? String), encoding: .utf8)
        XCTAssertTrue(log.contains(#""event":"loudness_alarm""#), "the take's log has the alarm")
        XCTAssertTrue(((try? String(contentsOfFile: hooks, encoding: .utf8)) ?? "").contains("loudness_alarm too_loud"))

        let manifest = try XCTUnwrap(summary["manifest_path"] as? String)
        let made = try run([jas, "report", manifest, "--output", "\(folder)/report.html", "--csv", "\(folder)/report.csv"])
        XCTAssertEqual(made.status, 0, made.output)
        let closed = try String(contentsOfFile: manifest, encoding: .utf8).components(separatedBy: #""event":"closed""#).count - 1
        let rows = try String(contentsOfFile: "\(folder)/report.csv", encoding: .utf8).split(separator: "\n").count - 1
        XCTAssertEqual(rows, closed)
        XCTAssertGreaterThanOrEqual(closed, 3)
    }
}
