import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import XCTest

/// Dead air during a take: a source that stops for longer than the hold is a
/// `silence` event and runs `--on-silence` once; its return is a `signal`
/// event and runs `--on-signal`, whose failure is logged. Real processes:
/// `jas play` as the source, `jas record` with the hooks.
final class RecordSilenceTests: JackTestCase {
    func testSilenceAndSignalRunTheirCommandsOnceEach() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func play(seconds: Double) throws -> Process {
            let player = Process()
            player.executableURL = URL(fileURLWithPath: jas)
            player.arguments = ["play", "--server", server.name, "--name", "source", "--port", "loopback:playback_1",
                                "--mix", "--for", String(seconds)]
            player.standardOutput = FileHandle.nullDevice
            player.standardError = FileHandle.nullDevice
            try player.run()
            return player
        }
        let probe = try Client(name: "probe", serverName: server.name)
        defer { probe.close() }
        let first = try play(seconds: 2)
        XCTAssertTrue(waitUntil(timeout: 10) { probe.port(named: "source:out_1")?.connections.isEmpty == false })
        let silenceMarker = "\(folder)/silence.txt", signalMarker = "\(folder)/signal.txt"
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "loopback:capture_1", "--output", "\(folder)/take.wav", "--for", "8",
            "--silence-threshold", "-50dBFS", "--silence-hold", "1s",
            "--on-silence", "echo \"$JAS_EVENT $JAS_CHANNELS $JAS_PORTS $JAS_SILENT_SECONDS\" >> '\(silenceMarker)'",
            "--on-signal", "echo \"$JAS_EVENT $JAS_CHANNELS $JAS_PORTS $JAS_SILENT_SECONDS\" >> '\(signalMarker)'; exit 3"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        first.waitUntilExit()
        XCTAssertTrue(waitUntil(timeout: 5) { recorder.event("silence") != nil }, "\(recorder.objects)")
        // The source stays away 2 s of the take.
        let silentSince = try XCTUnwrap(recorder.event("silence")?["at_frame"] as? Int, "\(recorder.objects)")
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.framesWritten >= silentSince + 2 * 48000 }, "\(recorder.objects.suffix(2))")
        let second = try play(seconds: 6)
        defer { if second.isRunning { second.terminate() } }
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("signal") != nil }, "\(recorder.objects)")
        let summary = try XCTUnwrap(recorder.finish(timeout: 20), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertEqual(summary["frames_written"] as? Int, 8 * 48000)

        let log = logEvents("\(folder)/take.log")
        let silences = log.filter { $0["event"] as? String == "silence" }
        let signals = log.filter { $0["event"] as? String == "signal" }
        XCTAssertEqual(silences.count, 1, "\(log)")
        XCTAssertEqual(signals.count, 1, "\(log)")
        let silence = try XCTUnwrap(silences.first), signal = try XCTUnwrap(signals.first)
        XCTAssertEqual(silence["channels"] as? [Int], [1])
        XCTAssertEqual(silence["silent_frames"] as? Int ?? 0, 48000, accuracy: 256)
        let silentFrom = try XCTUnwrap(silence["at_frame"] as? Int), backAt = try XCTUnwrap(signal["at_frame"] as? Int)
        XCTAssertEqual(signal["silent_frames"] as? Int, backAt - silentFrom, "\(signal)")
        XCTAssertGreaterThan(backAt - silentFrom, 48000 * 2, "the source was away at least 2 s: \(silence) \(signal)")
        XCTAssertLessThan(try XCTUnwrap(signal["level_dbfs"] as? Double), -19, "jas play's sine is at −20 dBFS")

        // Each command ran once, with the facts in its environment; the
        // failing one is logged with its status.
        XCTAssertTrue(waitUntil(timeout: 5) { (try? String(contentsOfFile: signalMarker, encoding: .utf8)) != nil })
        let silenceLines = try String(contentsOfFile: silenceMarker, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(silenceLines.count, 1, "\(silenceLines)")
        XCTAssertTrue(silenceLines.first?.hasPrefix("silence 1 loopback:capture_1 1.0") == true, "\(silenceLines)")
        let signalLines = try String(contentsOfFile: signalMarker, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(signalLines.count, 1, "\(signalLines)")
        XCTAssertTrue(signalLines.first?.hasPrefix("signal 1 loopback:capture_1 ") == true, "\(signalLines)")
        XCTAssertTrue(waitUntil(timeout: 5) { logEvents("\(folder)/take.log").contains { $0["event"] as? String == "hook_failed" } })
        let failed = logEvents("\(folder)/take.log").filter { $0["event"] as? String == "hook_failed" }
        XCTAssertEqual(failed.count, 1, "\(failed)")
        XCTAssertEqual(failed.first?["for"] as? String, "signal")
        XCTAssertEqual(failed.first?["reason"] as? String, "exited with status 3")
    }
}

/// A slow hook delays nothing: a second silence while the first command
/// still runs leaves the log, the progress and the end of the take on time;
/// the commands still running when the take ends get a bounded grace, then
/// are ended, each logged.
final class RecordSlowHookTests: JackTestCase {
    func testASlowHookDelaysNothingAndIsEndedAfterTheTake() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let marker = "jas-slow-hook-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let started = Date()
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "loopback:capture_1", "--output", "\(folder)/take.wav", "--for", "6",
            "--silence-hold", "1s", "--on-silence", "sleep 60; : \(marker)"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("silence") != nil }, "\(recorder.objects)")
        // The source plays a moment, and goes: a second silence while the first command sleeps.
        let player = try run([jas, "play", "--server", server.name, "--port", "loopback:playback_1", "--mix", "--for", "1"])
        XCTAssertEqual(player.status, 0, player.output)
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.objects.filter { $0["event"] as? String == "silence" }.count == 2 },
                      "\(recorder.objects)")
        XCTAssertEqual(try run(["pgrep", "-f", "^/bin/sh -c sleep 60; : \(marker)"]).output.split(separator: "\n").count, 2,
                       "both commands run")
        // Progress goes on while both sleep.
        let progressBefore = recorder.objects.filter { $0["event"] as? String == "progress" }.count
        XCTAssertTrue(waitUntil(timeout: 5) {
            recorder.objects.filter { $0["event"] as? String == "progress" }.count >= progressBefore + 2
        }, "progress stopped while a hook ran")
        let summary = try XCTUnwrap(recorder.finish(timeout: 40), recorder.stderr)
        let took = Date().timeIntervalSince(started)
        XCTAssertEqual(summary["frames_written"] as? Int, 6 * 48000)
        XCTAssertLessThan(took, 30, "the take waited for its hooks (60 s sleeps)")
        let log = logEvents("\(folder)/take.log")
        let ended = log.filter { ($0["reason"] as? String ?? "").contains("after the take ended: ended with SIGTERM") }
        XCTAssertEqual(ended.count, 2, "\(log)")
        XCTAssertEqual(log.last?["event"] as? String, "stopped", "the log's last line says why the take stopped")
        XCTAssertTrue(waitUntil(timeout: 5) { (try? self.run(["pgrep", "-f", "^/bin/sh -c sleep 60; : \(marker)"]))?.status == 1 },
                      "a hook outlived the take: \((try? run(["pgrep", "-af", marker]).output) ?? "")")
    }
}
