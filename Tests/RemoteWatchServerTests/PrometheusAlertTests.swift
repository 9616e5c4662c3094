import Foundation
import JackTestSupport
import LoopbackHarness
import XCTest

/// The alerting rules and the dashboard in `contrib/`, as a fleet uses
/// them: `promtool` accepts the rules; every metric they and the dashboard
/// name is one jas serves; and a real Prometheus (Debian's), scraping
/// `jas meter --http` every second with the rules loaded, fires the silence
/// alert for dead air and the loudness alert for a tone 10 LU hot.
final class PrometheusAlertTests: WatchTestCase {
    static let contrib = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("contrib")
    var rules: String { Self.contrib.appendingPathComponent("prometheus/jas-alerts.yml").path }
    var dashboard: String { Self.contrib.appendingPathComponent("grafana/jas-dashboard.json").path }

    func testTheShippedRulesFireInARealPrometheus() throws {
        let checked = try run(["promtool", "check", "rules", rules])
        XCTAssertEqual(checked.status, 0, checked.output)

        let server = try startServer(period: 256)
        let (meter, lines, url) = try startWatched([
            "meter", "--server", server.name, "--ports", "loopback:capture_1", "--http", "127.0.0.1:0",
            "--silence-hold", "1s", "--loudness", "r128", "--loudness-hold", "1s"])
        defer { if meter.isRunning { meter.terminate() } }
        // A short take, for the recorder's metrics.
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (recorder, recorded, recordURL) = try startWatched([
            "record", "--server", server.name, "--ports", "loopback:capture_2", "--output", "\(folder)/take.wav",
            "--http", "127.0.0.1:0"])
        defer { if recorder.isRunning { recorder.terminate() } }
        XCTAssertTrue(waitUntil(timeout: 10) { recorded.objects.contains { $0["event"] as? String == "progress" } })
        let served = Set(try probe(["metrics", url + "metrics"]).keys.map(Self.name))
            .union(try probe(["metrics", recordURL + "metrics"]).keys.map(Self.name))
        // As OpenMetrics (what Prometheus asks for): valid for the strict parser, NaN and −Inf included
        // (nothing plays yet: the loudness is below the gate, the peaks are digital silence).
        for watched in [url, recordURL] {
            let open = try probe(["openmetrics", watched + "metrics"])
            XCTAssertTrue((open["content_type"] as? String ?? "").hasPrefix("application/openmetrics-text"), "\(open)")
            let values = open["values"] as? [String: String] ?? [:]
            XCTAssertGreaterThan(values.count, 5, "\(open)")
            if watched == url {
                XCTAssertEqual(values["jas_shortterm_lufs"], "nan", "\(values)")
                XCTAssertEqual(values["jas_sample_peak_dbfs{channel=1}"], "-inf", "\(values)")
                XCTAssertNotNil(values["jas_xruns_total"], "a counter's sample keeps _total")
            }
        }
        recorder.interrupt()
        recorder.waitUntilExit()
        // Every metric the rules and the dashboard name is served (a renamed metric would leave them blind).
        for file in [rules, dashboard] {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let named = Set(text.matches(of: /jas_[a-z_]+/).map { String($0.output) })
            XCTAssertFalse(named.isEmpty)
            XCTAssertEqual(named.subtracting(served), [], "\(file) names metrics jas does not serve; it serves \(served.sorted())")
        }

        // Prometheus, scraping the meter every second with the rules loaded.
        let port = try FreePort.tcp()
        let address = url.replacingOccurrences(of: "http://", with: "").replacingOccurrences(of: "/", with: "")
        let configuration = """
            global: {scrape_interval: 1s, evaluation_interval: 1s}
            rule_files: ["\(rules)"]
            scrape_configs:
              - job_name: jas-meter
                static_configs: [{targets: ["\(address)"]}]
            """
        try configuration.write(toFile: "\(folder)/prometheus.yml", atomically: true, encoding: .utf8)
        let prometheus = try LoopbackServer.spawn([
            "/usr/bin/prometheus", "--config.file=\(folder)/prometheus.yml", "--storage.tsdb.path=\(folder)/data",
            "--web.listen-address=127.0.0.1:\(port)"], logPath: "\(folder)/prometheus.log")
        defer {
            kill(prometheus, SIGTERM)
            var status: Int32 = 0
            waitpid(prometheus, &status, 0)
        }
        let alerts = "http://127.0.0.1:\(port)/api/v1/alerts"
        func firing() -> Set<String> {
            guard let result = try? run(["python3", "-c", "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())", alerts]),
                  result.status == 0,
                  let object = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any],
                  let list = (object["data"] as? [String: Any])?["alerts"] as? [[String: Any]] else { return [] }
            return Set(list.filter { $0["state"] as? String == "firing" }
                .compactMap { ($0["labels"] as? [String: String])?["alertname"] })
        }
        let log = { (try? String(contentsOfFile: "\(folder)/prometheus.log", encoding: .utf8)) ?? "" }
        // Nothing plays: dead air.
        XCTAssertTrue(waitUntil(timeout: 60) { firing().contains("JasSilence") },
                      "JasSilence never fired: \(firing()); jas said \(lines.objects.filter { $0["event"] as? String != "reading" }.suffix(5)); prometheus: \(log().suffix(2000))")
        XCTAssertFalse(firing().contains("JasLoudnessOutOfRange"), "silence is dead air's alarm, not too quiet")
        // A 997 Hz tone at −10 dBFS: about −13 LUFS, 10 LU over R128's target.
        let player = try play(server, level: -10)
        defer { player.terminate() }
        XCTAssertTrue(waitUntil(timeout: 60) { firing().contains("JasLoudnessOutOfRange") }, "the loudness alert never fired: \(firing())")
        XCTAssertTrue(waitUntil(timeout: 30) { !firing().contains("JasSilence") }, "the silence alert did not end")
        XCTAssertFalse(firing().contains("JasJackServerDown"))
        XCTAssertFalse(firing().contains("JasDown"))
    }

    /// `jas_loudness_alarm{alarm=too_loud}` → `jas_loudness_alarm`.
    static func name(_ key: String) -> String { String(key.prefix { $0 != "{" }) }
}
