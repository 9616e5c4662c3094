import Foundation
import JackTestSupport
import LoopbackHarness
import XCTest

/// `jas meter --http` and `jas record --http` as their users reach them:
/// real processes on a private jackd, read by Python's Prometheus parser,
/// a WebSocket client and headless Chromium (Tests/RemoteWatchTests/Probes).
class WatchTestCase: JackTestCase {
    /// Runs the probe script; its JSON answer.
    func probe(_ arguments: [String], timeout: Double = 30) throws -> [String: Any] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Probes/watch_probe.py").path
        let result = try run(["timeout", String(Int(timeout)), "python3", script] + arguments)
        guard result.status == 0, let line = result.output.split(separator: "\n").last,
              let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            XCTFail("probe \(arguments) failed (status \(result.status)): \(result.output)")
            throw CocoaError(.fileReadCorruptFile)
        }
        return object
    }

    /// Starts a command with --json and waits for its `http` event: the URL it serves.
    func startWatched(_ arguments: [String]) throws -> (process: Process, lines: LineCollector, url: String) {
        let output = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jas)
        process.arguments = arguments + ["--json"]
        process.standardOutput = output
        let lines = LineCollector(output)
        try process.run()
        XCTAssertTrue(waitUntil(timeout: 15) { lines.objects.contains { $0["event"] as? String == "http" } },
                      "no http event: \(lines.objects)")
        let url = try XCTUnwrap(lines.objects.first { $0["event"] as? String == "http" }?["url"] as? String)
        return (process, lines, url)
    }

    /// Plays a sine into `port` until the test ends.
    func play(_ server: LoopbackServer, port: String = "loopback:playback_1", level: Double = -20) throws -> Process {
        let player = Process()
        player.executableURL = URL(fileURLWithPath: jas)
        player.arguments = ["play", "--server", server.name, "--port", port, "--level=\(level)",
                            "--frequency", "997", "--mix"]
        player.standardOutput = FileHandle.nullDevice
        player.standardError = FileHandle.nullDevice
        try player.run()
        return player
    }

    func metric(_ values: [String: Any], _ key: String) -> Double? {
        if let number = values[key] as? Double { return number }
        if let text = values[key] as? String { return Double(text) }
        return nil
    }
}

final class MeterWatchTests: WatchTestCase {
    /// /metrics parses and reads the level played; the WebSocket carries at
    /// least 8 readings a second; a jackd restart is seen in both.
    func testMetricsWebSocketAndAServerRestart() throws {
        let server = try startServer(period: 256)
        let player = try play(server)
        defer { player.terminate() }
        let (meter, lines, url) = try startWatched(["meter", "--server", server.name, "--ports", "loopback:capture_1",
                                                    "--http", "127.0.0.1:0"])
        defer { if meter.isRunning { meter.terminate() } }
        XCTAssertTrue(url.hasPrefix("http://127.0.0.1:") && !url.hasSuffix(":0/"), url)
        // The level has settled once two readings in a row say -20, and the
        // momentary loudness once its 400 ms window holds only the tone (two
        // 100 ms readings after the meter's start, it held half silence: -26).
        XCTAssertTrue(waitUntil(timeout: 10) {
            let readings = lines.objects.filter { $0["event"] as? String == "reading" }.suffix(2)
            let peaks = readings.compactMap {
                (($0["channels"] as? [[String: Any]])?.first?["sample_peak_dbfs"] as? Double)
            }
            let momentary = readings.last?["momentary_lufs"] as? Double ?? -200
            return peaks.count == 2 && peaks.allSatisfy { abs($0 + 20) < 0.1 } && abs(momentary + 23) < 1.5
        }, "the meter never read -20 dBFS and about -23 LUFS: \(lines.objects.suffix(3))")

        let values = try probe(["metrics", url + "metrics"])
        let peak = try XCTUnwrap(metric(values, "jas_sample_peak_dbfs{channel=1}"), "\(values)")
        XCTAssertEqual(peak, -20, accuracy: 0.1)
        let truePeak = try XCTUnwrap(metric(values, "jas_true_peak_dbtp{channel=1}"), "\(values)")
        // Never below the sample peak (4x oversampling finds peaks between samples; a reading
        // that spans an xrun's splice can read higher, so no upper bound here).
        XCTAssertGreaterThanOrEqual(truePeak, peak - 0.05)
        for name in ["jas_momentary_lufs", "jas_shortterm_lufs", "jas_integrated_lufs", "jas_loudness_range_lu",
                     "jas_xruns_total", "jas_server_up", "jas_media_services_resets_total", "jas_silence"] {
            XCTAssertNotNil(values[name], "\(name) missing: \(values.keys.sorted())")
        }
        XCTAssertEqual(metric(values, "jas_server_up"), 1)
        XCTAssertEqual(metric(values, "jas_silence"), 0)
        // A 997 Hz sine at -20 dBFS peak: about -23 LUFS momentary (K-weighting adds a little at 1 kHz).
        XCTAssertEqual(try XCTUnwrap(metric(values, "jas_momentary_lufs")), -23, accuracy: 1.5)

        let stream = try probe(["ws", url.replacingOccurrences(of: "http://", with: "ws://") + "ws", "3"])
        let messages = try XCTUnwrap(stream["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.first?["event"] as? String, "status", "the first message is the state")
        let readings = messages.filter { $0["event"] as? String == "reading" }
        let times = readings.compactMap { $0["_received"] as? Double }
        XCTAssertGreaterThanOrEqual(times.count, 20, "readings over 3 s: \(times.count)")
        if let first = times.first, let last = times.last, last > first {
            XCTAssertGreaterThanOrEqual(Double(times.count - 1) / (last - first), 8, "readings per second")
        }
        XCTAssertNotNil((readings.last?["channels"] as? [[String: Any]])?.first?["true_peak_dbtp"])

        // A restart: the socket hears it, the metrics say 0 while the server is gone, then 1.
        let listener = Process()
        let heard = Pipe()
        listener.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        listener.arguments = ["python3", URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Probes/watch_probe.py").path, "ws",
            url.replacingOccurrences(of: "http://", with: "ws://") + "ws", "12"]
        listener.standardOutput = heard
        let heardText = LineCollector.Text()
        heardText.read(heard)
        try listener.run()
        XCTAssertTrue(waitUntil(timeout: 10) {
            (try? self.probe(["metrics", url + "metrics"])).flatMap { self.metric($0, "jas_http_websocket_viewers") } == 1
        }, "the listener never connected")
        server.kill()
        XCTAssertTrue(waitUntil(timeout: 10) {
            (try? self.probe(["metrics", url + "metrics"])).flatMap { self.metric($0, "jas_server_up") } == 0
        }, "jas_server_up never went to 0")
        _ = try startServer(name: server.name, period: 256)
        XCTAssertTrue(waitUntil(timeout: 15) {
            (try? self.probe(["metrics", url + "metrics"])).flatMap { self.metric($0, "jas_server_up") } == 1
        }, "jas_server_up never came back to 1")
        let after = try probe(["metrics", url + "metrics"])
        XCTAssertEqual(metric(after, "jas_media_services_resets_total"), 1)
        listener.waitUntilExit()
        let events = (heardText.text.split(separator: "\n").last.flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }?["messages"] as? [[String: Any]] ?? []).compactMap { $0["event"] as? String }
        XCTAssertTrue(events.contains("mediaServicesWereLost"), "\(Set(events))")
        XCTAssertTrue(events.contains("mediaServicesWereReset"), "\(Set(events))")

        meter.interrupt()
        meter.waitUntilExit()
        XCTAssertEqual(meter.terminationStatus, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { lines.objects.contains { $0["event"] as? String == "summary" } })
    }

    /// A compliance alarm reaches everyone who watches: its event, the
    /// metric `jas_loudness_alarm`, `/api/status`, and the command of
    /// `--on-loudness-alarm`; and its end when the tone stops (silence ends a too-loud alarm).
    func testALoudnessAlarmReachesTheMetricsTheStatusAndItsCommand() throws {
        let server = try startServer(period: 256)
        let player = try play(server, level: -12)
        defer { if player.isRunning { player.terminate() } }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let hooks = "\(folder)/hooks.txt"
        let (meter, lines, url) = try startWatched([
            "meter", "--server", server.name, "--ports", "loopback:capture_1", "--http", "127.0.0.1:0",
            "--loudness", "r128", "--loudness-hold", "1s",
            "--on-loudness-alarm", "echo \"$JAS_EVENT $JAS_ALARM\" >> '\(hooks)'"])
        defer { if meter.isRunning { meter.terminate() } }
        let before = try probe(["metrics", url + "metrics"])
        XCTAssertNotNil(metric(before, "jas_loudness_alarm{alarm=true_peak_over}"), "\(before.keys.sorted())")
        XCTAssertTrue(waitUntil(timeout: 20) { lines.objects.contains { $0["event"] as? String == "loudness_alarm" } },
                      "no loudness alarm: \(lines.objects.suffix(3))")
        let alarm = try XCTUnwrap(lines.objects.first { $0["event"] as? String == "loudness_alarm" })
        XCTAssertEqual(alarm["alarm"] as? String, "too_loud")
        // The worst so far: the 3 s window is still filling with the tone after a hold of 1 s.
        XCTAssertGreaterThan(alarm["level_lufs"] as? Double ?? -99, -22)
        XCTAssertEqual(alarm["threshold_lufs"] as? Double, -22)

        let values = try probe(["metrics", url + "metrics"])
        XCTAssertEqual(metric(values, "jas_loudness_alarm{alarm=too_loud}"), 1, "\(values)")
        XCTAssertEqual(metric(values, "jas_loudness_alarm{alarm=true_peak_over}"), 0)
        XCTAssertEqual(metric(values, "jas_loudness_alarm{alarm=too_quiet}"), 0)
        let status = try run(["python3", "-c", "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())",
                              url + "api/status"])
        let state = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any], status.output)
        XCTAssertEqual(state["loudness_alarms"] as? [String], ["too_loud"], "\(state)")
        XCTAssertEqual(state["target_lufs"] as? Double, -23)
        XCTAssertTrue(waitUntil(timeout: 10) {
            ((try? String(contentsOfFile: hooks, encoding: .utf8)) ?? "").contains("loudness_alarm too_loud")
        }, "the command did not run")

        player.terminate()
        XCTAssertTrue(waitUntil(timeout: 20) { lines.objects.contains { $0["event"] as? String == "loudness_alarm_end" } },
                      "the alarm never ended: \(lines.objects.suffix(3))")
        XCTAssertTrue(waitUntil(timeout: 10) {
            (try? self.probe(["metrics", url + "metrics"])).flatMap { self.metric($0, "jas_loudness_alarm{alarm=too_loud}") } == 0
        })
        XCTAssertTrue(waitUntil(timeout: 10) {
            ((try? String(contentsOfFile: hooks, encoding: .utf8)) ?? "").contains("loudness_alarm_end too_loud")
        }, "the command did not run at the end")
        XCTAssertEqual(lines.objects.filter { ($0["event"] as? String ?? "").hasPrefix("loudness_alarm") }.count, 2,
                       "one alarm and one end: \(lines.objects.filter { ($0["event"] as? String ?? "").hasPrefix("loudness") })")
        meter.interrupt()
        meter.waitUntilExit()
        XCTAssertEqual(meter.terminationStatus, 0)
    }

    /// Control routes: 403 without a token set, 401 with a wrong one, done with the right one.
    func testControlRoutesAskForTheToken() throws {
        let server = try startServer(period: 256)
        let (open, _, openURL) = try startWatched(["meter", "--server", server.name, "--ports", "loopback:capture_1",
                                                   "--http", "127.0.0.1:0"])
        defer { if open.isRunning { open.terminate() } }
        let refused = try probe(["post", openURL + "api/loudness/reset", "Bearer anything-at-all"])
        XCTAssertEqual(refused["status"] as? Int, 403, "\(refused)")
        XCTAssertTrue((refused["body"] as? String ?? "").contains("--http-token"), "\(refused)")
        open.interrupt()
        open.waitUntilExit()

        let token = "studio-7f3a9c2e"
        let (meter, lines, url) = try startWatched(["meter", "--server", server.name, "--ports", "loopback:capture_1",
                                                    "--http", "127.0.0.1:0", "--http-token", token])
        defer { if meter.isRunning { meter.terminate() } }
        XCTAssertEqual(try probe(["post", url + "api/loudness/reset"])["status"] as? Int, 401)
        XCTAssertEqual(try probe(["post", url + "api/loudness/reset", "Bearer studio-7f3a9c2f"])["status"] as? Int, 401)
        XCTAssertEqual(try probe(["post", url + "api/loudness/reset", token])["status"] as? Int, 401, "no Bearer")
        XCTAssertEqual(lines.objects.filter { $0["event"] as? String == "loudness_reset" }.count, 0)
        for (route, event) in [("reset", "loudness_reset"), ("pause", "loudness_paused"), ("resume", "loudness_resumed")] {
            let done = try probe(["post", url + "api/loudness/" + route, "Bearer " + token])
            XCTAssertEqual(done["status"] as? Int, 200, "\(done)")
            XCTAssertTrue(waitUntil(timeout: 5) { lines.objects.contains { $0["event"] as? String == event } }, event)
        }
        XCTAssertEqual(try probe(["post", url + "api/stop", "Bearer " + token])["status"] as? Int, 404,
                       "jas meter has no stop route")
        meter.interrupt()
        meter.waitUntilExit()
        XCTAssertEqual(meter.terminationStatus, 0)
    }

    /// With a token, reads need it too: the metrics, the state, the page and
    /// its WebSocket, each given the token in one of the ways people's tools
    /// give it (a bearer token, Basic auth, the page's ?token= once and its cookie).
    func testWithATokenEveryRouteAsksForIt() throws {
        let server = try startServer(period: 256)
        let token = "station-41c9e2aa"
        let (meter, _, url) = try startWatched(["meter", "--server", server.name, "--ports", "loopback:capture_1",
                                                "--http", "127.0.0.1:0", "--http-token", token])
        defer { if meter.isRunning { meter.terminate() } }
        let basic = "Basic " + Data("prometheus:\(token)".utf8).base64EncodedString()
        for route in ["metrics", "api/status", ""] {
            XCTAssertEqual(try probe(["get", url + route])["status"] as? Int, 401, "/\(route) without the token")
            XCTAssertEqual(try probe(["get", url + route, "Bearer station-41c9e2ab"])["status"] as? Int, 401, "/\(route)")
            XCTAssertEqual(try probe(["get", url + route, "Bearer " + token])["status"] as? Int, 200, "/\(route)")
            XCTAssertEqual(try probe(["get", url + route, basic])["status"] as? Int, 200, "/\(route) with Basic auth")
        }
        // The page given the token once: it is set as a cookie, which then opens everything, the WebSocket too.
        let page = try probe(["get", url + "?token=" + token])
        XCTAssertEqual(page["status"] as? Int, 200, "\(page)")
        let cookie = try XCTUnwrap((page["set_cookie"] as? String)?.split(separator: ";").first.map(String.init), "\(page)")
        XCTAssertTrue(cookie.hasPrefix("jas_token="), cookie)
        XCTAssertTrue((page["set_cookie"] as? String ?? "").contains("HttpOnly"), "\(page)")
        XCTAssertEqual(try probe(["get", url + "metrics", "", cookie])["status"] as? Int, 200)
        let wsURL = url.replacingOccurrences(of: "http://", with: "ws://") + "ws"
        // Refused before the upgrade (NIO's upgrader turns the 401 into a 400).
        XCTAssertTrue([400, 401].contains(try probe(["wsopen", wsURL])["status"] as? Int ?? 0), "the WebSocket without the token")
        let opened = try probe(["wsopen", wsURL, cookie])
        XCTAssertEqual(opened["status"] as? Int, 101, "\(opened)")
        XCTAssertEqual(opened["first"] as? String, "status", "\(opened)")
        XCTAssertEqual(try probe(["wsopen", wsURL + "?token=" + token])["status"] as? Int, 101)
        meter.interrupt()
        meter.waitUntilExit()
    }

    /// A port in use, a bad address, a bad token, an open address without a
    /// token: status 2 and the reason, before metering starts.
    func testBadSettingsEndBeforeAnythingStarts() throws {
        let server = try startServer(period: 256)
        let (first, _, url) = try startWatched(["meter", "--server", server.name, "--ports", "loopback:capture_1",
                                                "--http", "127.0.0.1:0"])
        defer { if first.isRunning { first.terminate() } }
        let port = try XCTUnwrap(url.split(separator: ":").last?.split(separator: "/").first.map(String.init))
        let cases: [([String], String)] = [
            (["--http", "127.0.0.1:" + port], "another program already listens there"),
            (["--http", "studio:8080"], "not a numeric IP address"),
            (["--http", "0.0.0.0:0"], "--http-token"),
            (["--http", "127.0.0.1:0", "--http-token", "short"], "at least 8"),
            (["--http-token", "0123456789abcdef"], "--http-token is for --http"),
            (["--http", "192.0.2.1:0", "--http-token", "0123456789abcdef"], "no such address"),
        ]
        for (arguments, says) in cases {
            let result = try run([jas, "meter", "--server", server.name, "--ports", "loopback:capture_1", "--for", "5"]
                                 + arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.output)")
            XCTAssertTrue(result.output.contains(says), "\(arguments): \(result.output)")
            XCTAssertFalse(result.output.contains("metering "), "\(arguments) started metering: \(result.output)")
        }
        first.interrupt()
        first.waitUntilExit()
    }
}

final class RecordWatchTests: WatchTestCase {
    /// A take watched from afar: its progress and readings on the socket,
    /// its counters in the metrics, and a stop from POST /api/stop.
    func testATakeIsWatchedAndStoppedFromAfar() throws {
        let server = try startServer(period: 256)
        let player = try play(server)
        defer { player.terminate() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("watch-\(getpid())-\(Int.random(in: 0..<1_000_000))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("take.wav").path
        let token = "take-0123456789"
        let (recorder, lines, url) = try startWatched(["record", "--server", server.name, "--ports", "loopback:capture_1",
                                                       "--output", path, "--http", "127.0.0.1:0", "--http-token", token])
        defer { if recorder.isRunning { recorder.terminate() } }
        // The page serves from before the take is set up: watched once it runs (on a loaded machine that takes a while).
        XCTAssertTrue(waitUntil(timeout: 15) { lines.objects.contains { $0["event"] as? String == "started" } },
                      "the take did not start: \(lines.objects)")
        // With a token every route asks for it; a WebSocket client gives it in the address.
        let stream = try probe(["ws", url.replacingOccurrences(of: "http://", with: "ws://") + "ws?token=" + token, "2"])
        let messages = try XCTUnwrap(stream["messages"] as? [[String: Any]])
        let status = try XCTUnwrap(messages.first)
        XCTAssertEqual(status["tool"] as? String, "record")
        XCTAssertEqual(status["path"] as? String, path)
        let progress = messages.filter { $0["event"] as? String == "progress" }
        XCTAssertGreaterThanOrEqual(progress.count, 5, "progress 4 times a second")
        XCTAssertEqual(progress.last?["path"] as? String, path)
        let readings = messages.filter { $0["event"] as? String == "reading" }
        XCTAssertGreaterThanOrEqual(readings.count, 12, "the take's meter reads 10 times a second")
        let peak = try XCTUnwrap((readings.last?["channels"] as? [[String: Any]])?.first?["sample_peak_dbfs"] as? Double)
        XCTAssertEqual(peak, -20, accuracy: 0.1, "the take's level")

        let values = try probe(["metrics", url + "metrics?token=" + token])
        let frames = try XCTUnwrap(metric(values, "jas_record_frames_written_total"), "\(values.keys.sorted())")
        XCTAssertGreaterThan(frames, 48_000)
        XCTAssertEqual(metric(values, "jas_record_overruns_total"), 0)
        XCTAssertNotNil(metric(values, "jas_record_gap_frames_total"))
        // The sample clock's rate against the wall clock: not a number until 10 s of the take measured it.
        XCTAssertEqual(metric(values, "jas_record_clock_rate_error_ppm")?.isNaN, true, "\(values.keys.sorted())")

        XCTAssertEqual(try probe(["post", url + "api/stop"])["status"] as? Int, 401)
        XCTAssertTrue(recorder.isRunning)
        XCTAssertEqual(try probe(["post", url + "api/stop", "Bearer " + token])["status"] as? Int, 200)
        recorder.waitUntilExit()
        XCTAssertEqual(recorder.terminationStatus, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { lines.objects.contains { $0["event"] as? String == "summary" } })
        let summary = try XCTUnwrap(lines.objects.first { $0["event"] as? String == "summary" })
        XCTAssertTrue((summary["stop_reason"] as? String ?? "").contains("POST /api/stop"), "\(summary)")
        XCTAssertGreaterThan(summary["frames_written"] as? Int ?? 0, 48_000)
    }
}

/// The page in a real browser: headless Chromium loads it, its meters move,
/// its graph draws the short-term loudness with the alarm the tone is in
/// (−12 dBFS is about −15 LUFS: too loud for R128), and it carries on after
/// the tool restarts on the same port.
final class WatchPageTests: WatchTestCase {
    func testThePageMovesAndSurvivesARestartOfTheTool() throws {
        let server = try startServer(period: 256)
        let player = try play(server, level: -12)
        defer { player.terminate() }
        let compliance = ["--loudness", "r128", "--loudness-hold", "1s"]
        let (meter, lines, url) = try startWatched(["meter", "--server", server.name, "--ports", "loopback:capture_1",
                                                    "--http", "127.0.0.1:0"] + compliance)
        defer { if meter.isRunning { meter.terminate() } }
        XCTAssertTrue(waitUntil(timeout: 20) { lines.objects.contains { $0["event"] as? String == "loudness_alarm" } },
                      "no loudness alarm: \(lines.objects.suffix(3))")
        let address = url.replacingOccurrences(of: "http://", with: "").replacingOccurrences(of: "/", with: "")
        let artifacts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        let shot = artifacts.appendingPathComponent("watch-page.png").path
        try? FileManager.default.removeItem(atPath: shot)

        // The browser reads the page for 9 s more after its screenshot; the meter restarts meanwhile.
        let browser = Process()
        let output = Pipe()
        browser.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        browser.arguments = ["timeout", "90", "python3", URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Probes/watch_probe.py").path, "browser", url, shot, "9"]
        browser.standardOutput = output
        let text = LineCollector.Text()
        text.read(output)
        try browser.run()
        XCTAssertTrue(waitUntil(timeout: 60) { FileManager.default.fileExists(atPath: shot) }, "no screenshot: \(text.text)")
        meter.interrupt()
        meter.waitUntilExit()
        // The tool stays away for a while on purpose: long enough for the page to say so.
        usleep(1_500_000)
        let (again, _, _) = try startWatched(["meter", "--server", server.name, "--ports", "loopback:capture_1",
                                              "--http", address] + compliance)
        defer { if again.isRunning { again.terminate() } }
        browser.waitUntilExit()
        XCTAssertEqual(browser.terminationStatus, 0, text.text)
        let result = try XCTUnwrap(text.text.split(separator: "\n").last.flatMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }, text.text)
        let first = try XCTUnwrap(result["first"] as? [String: Any])
        let second = try XCTUnwrap(result["second"] as? [String: Any])
        XCTAssertEqual(first["channels"] as? Int, 1, "\(first)")
        XCTAssertNotEqual(first["seconds"] as? String, second["seconds"] as? String, "the page did not move")
        XCTAssertEqual((second["levels"] as? [String])?.first, "-12.0", "\(second)")
        XCTAssertTrue((second["title"] as? String ?? "").contains(server.name), "\(second)")
        XCTAssertEqual(second["banner"] as? String, "Loudness alarm: too loud.")
        XCTAssertEqual(second["compliance"] as? String, "ALARM: too loud")
        // The graph holds the readings since the page opened (ten a second), each drawn in alarm, no true peak over.
        let graph = try XCTUnwrap(second["graph"] as? [String: String], "\(second)")
        let points = Int(graph["points"] ?? "") ?? 0
        XCTAssertGreaterThanOrEqual(points, 10, "\(graph)")
        XCTAssertEqual(graph["alarmed"], graph["points"], "\(graph)")
        XCTAssertEqual(graph["overs"], "0")
        let later = try XCTUnwrap(result["later"] as? [[String: Any]])
        XCTAssertTrue(later.contains { ($0["banner"] as? String ?? "").contains("not answering") },
                      "the page never said the tool was gone: \(later.map { $0["banner"] ?? "" })")
        let last = try XCTUnwrap(later.last)
        XCTAssertFalse((last["banner"] as? String ?? "").contains("not answering"), "the page did not come back: \(later)")
        let seconds = Double((last["seconds"] as? String ?? "").replacingOccurrences(of: " s", with: "")) ?? 99
        XCTAssertLessThan(seconds, 8, "the readings are the new meter's: \(last)")
        again.interrupt()
        again.waitUntilExit()
    }
}
