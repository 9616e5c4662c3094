import Foundation
import JackTestSupport
import LoopbackHarness
import Metering
import XCTest

/// A long metering run's programme, reset and paused without restarting
/// `jas meter` (SIGUSR1, lines on stdin), with its compliance log.
final class MeterProgrammeTests: JackTestCase {
    static let rate = 48000.0

    /// The quiet programme: two steady tones, the same loudness in any window.
    static func quiet(_ frame: Int) -> Float {
        let t = Double(frame) / rate
        return Float(0.03 * sin(2 * .pi * 220 * t) + 0.02 * sin(2 * .pi * 3100 * t))
    }

    /// A loud 1 kHz tone at `dBFS`.
    static func tone(_ frame: Int, dBFS: Double) -> Float {
        Float(pow(10, dBFS / 20) * sin(2 * .pi * 1000 * Double(frame) / rate))
    }

    func testResetAndPauseLeaveOnlyTheAudioSinceTheResetLessThePause() throws {
        // 3 s loud, 3 s quiet (reset at 4 s), 2 s louder (paused from 5.3 s
        // to 8.5 s), 3 s quiet (paused again at 10.6 s): integrated loudness must be the quiet tones'
        // alone. Without the reset it would be the first tone's, without the
        // pause the louder one's (either gates the quiet tones out).
        var samples: [Float] = []
        for frame in 0..<Int(11 * Self.rate) {
            let seconds = Double(frame) / Self.rate
            let value = seconds < 3 ? Self.tone(frame, dBFS: -10)
                : seconds >= 6 && seconds < 8 ? Self.tone(frame, dBFS: -6) : Self.quiet(frame)
            samples += [value, value]
        }
        let server = try startServer(period: 256)
        let player = try BufferPlayer(serverName: server.name, samples: samples, channels: 2)
        defer { player.session.close() }
        let folder = NSTemporaryDirectory() + "meter-programme-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let logPath = "\(folder)/loudness.jsonl"

        let commands = Pipe()
        let output = Pipe()
        let meter = Process()
        meter.executableURL = URL(fileURLWithPath: jas)
        meter.arguments = ["meter", "--json", "--server", server.name, "--ports", "buffer-player:out_*",
                           "--interval", "100ms", "--log", logPath, "--log-interval", "1s"]
        meter.standardInput = commands
        meter.standardOutput = output
        let lines = LineCollector(output)
        try meter.run()
        defer { if meter.isRunning { meter.terminate() } }
        XCTAssertTrue(waitUntil(timeout: 10) { lines.objects.contains { $0["event"] as? String == "reading" } })
        player.play()
        func when(_ seconds: Double, _ action: () -> Void) {
            XCTAssertTrue(waitUntil(timeout: 20) { player.playedFrames >= Int(seconds * Self.rate) }, "played to \(seconds) s")
            action()
        }
        when(4.0) { kill(meter.processIdentifier, SIGUSR1) }
        when(5.3) { commands.fileHandleForWriting.write(Data("pause\n".utf8)) }
        when(8.5) { commands.fileHandleForWriting.write(Data("resume\n".utf8)) }
        // Paused again before the end: the silence after it would count
        // (a 400 ms block a quarter full of the tones passes the gates).
        when(10.6) { commands.fileHandleForWriting.write(Data("pause\n".utf8)) }
        XCTAssertTrue(waitUntil(timeout: 20) { player.finished })
        // The last pause heard before the meter is stopped.
        XCTAssertTrue(waitUntil(timeout: 10) { lines.objects.filter { $0["event"] as? String == "loudness_paused" }.count == 2 })
        meter.interrupt()
        meter.waitUntilExit()
        // Its summary is the last line jas meter writes. (Not the pipe's end:
        // in two rehearsals it did not come within 15 s of the meter's exit,
        // every line read; what held the pipe is not found yet.)
        XCTAssertTrue(waitUntil(timeout: 15) { lines.objects.contains { $0["event"] as? String == "summary" } },
                      "the meter's summary arrives")
        XCTAssertEqual(meter.terminationStatus, 0)

        let events = lines.objects.compactMap { $0["event"] as? String }
        let commanded = ["loudness_reset", "loudness_paused", "loudness_resumed", "loudness_paused"]
        XCTAssertEqual(events.filter { $0.hasPrefix("loudness_") }, commanded)
        let summary = try XCTUnwrap(lines.objects.last { $0["event"] as? String == "summary" })
        let integrated = try XCTUnwrap(summary["integrated_lufs"] as? Double, "\(summary)")
        let script = """
            import numpy, pyloudnorm
            t = numpy.arange(6 * 48000) / 48000.0
            x = (0.03 * numpy.sin(2 * numpy.pi * 220 * t) + 0.02 * numpy.sin(2 * numpy.pi * 3100 * t)).astype("float32")
            print(pyloudnorm.Meter(48000).integrated_loudness(numpy.stack([x, x], axis=1).astype("float64")))
            """
        let reference = try run(["python3", "-c", script])
        XCTAssertEqual(reference.status, 0, reference.output)
        let theirs = try XCTUnwrap(Double(reference.output.trimmingCharacters(in: .whitespacesAndNewlines)), reference.output)
        print(String(format: "after reset and pause: ours %.2f LUFS, pyloudnorm on the quiet tones %.2f LUFS", integrated, theirs))
        XCTAssertEqual(integrated, theirs, accuracy: 0.1)
        // The programme's peaks are the quiet part's too (0.05 is −26 dBFS).
        XCTAssertLessThan(try XCTUnwrap(summary["true_peak_dbtp"] as? Double), -25)
        let metered = try XCTUnwrap(summary["seconds"] as? Double)
        let programme = try XCTUnwrap(summary["programme_seconds"] as? Double)
        // Only 1.3 s + 2.1 s since the reset are not paused.
        XCTAssertEqual(programme, 3.4, accuracy: 0.3, "\(summary)")
        XCTAssertGreaterThan(metered, 11)

        // The compliance log: a line per second of audio, the three commands in order, paused lines marked.
        let log = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let intervals = log.filter { $0["event"] as? String == "interval" }
        XCTAssertGreaterThanOrEqual(intervals.count, 11, "\(log)")
        XCTAssertEqual(log.compactMap { $0["event"] as? String }.filter { $0.hasPrefix("loudness_") }, commanded)
        XCTAssertTrue(intervals.contains { $0["paused"] as? Bool == true }, "\(intervals)")
        // On the clock's seconds, to the millisecond.
        XCTAssertTrue(intervals.allSatisfy { ($0["from"] as? String ?? "").hasSuffix(".000Z") && $0["audio_seconds"] is Double },
                      "\(intervals)")
        XCTAssertTrue(intervals.dropLast().allSatisfy { $0["partial"] == nil })
        XCTAssertEqual(log.filter { $0["event"] as? String == "hour" }.count, 1, "the hour under way, at the end")
        let loudest = intervals.compactMap { $0["max_momentary_lufs"] as? Double }.max() ?? -99
        XCTAssertGreaterThan(loudest, -12, "the louder tone's seconds are logged while paused too")
    }

    func testALogThatCannotBeWrittenIsRefusedBeforeStartOrSaidOnceAfter() throws {
        let server = try startServer(period: 256)
        let result = try run([jas, "meter", "--server", server.name, "--log", "/nonexistent/folder/l.jsonl", "--for", "1"])
        XCTAssertEqual(result.status, 2, result.output)
        XCTAssertTrue(result.output.contains("/nonexistent/folder/l.jsonl"), result.output)
        // A log that fills up (/dev/full: every write fails with ENOSPC) is said once; metering goes on.
        let full = try run([jas, "meter", "--json", "--server", server.name, "--log", "/dev/full", "--log-interval", "0.2s",
                            "--interval", "100ms", "--for", "1.5"])
        XCTAssertEqual(full.status, 0, full.output)
        let objects = full.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let warnings = objects.filter { $0["event"] as? String == "warning" }
        XCTAssertEqual(warnings.count, 1, full.output)
        XCTAssertTrue((warnings.first?["message"] as? String ?? "").contains("cannot write to the loudness log '/dev/full'"),
                      full.output)
        XCTAssertEqual(objects.last?["event"] as? String, "summary", full.output)
        let interval = try run([jas, "meter", "--server", server.name, "--log-interval", "soon"])
        XCTAssertEqual(interval.status, 64, interval.output)
        XCTAssertTrue(interval.output.contains("--log-interval must be a duration"), interval.output)
    }
}

/// A metered device that is unplugged and plugged in again (a route change):
/// the meter says when it went and when it came back, and meters it again.
final class MeterSourceLostTests: JackTestCase {
    func testAnUnpluggedDeviceIsLostAndFoundAgain() throws {
        let server = try startServer(period: 256)
        var microphone: SimulatedDevice? = try SimulatedDevice(name: "usbmic", serverName: server.name, type: .usbAudio,
                                                               channels: 1)
        let (meter, lines) = try startMeter(jas, ["--server", server.name, "--ports", "usbmic:capture_1",
                                                  "--interval", "100ms"])
        defer { if meter.isRunning { meter.terminate() } }
        func events(_ name: String) -> [[String: Any]] { lines.objects.filter { $0["event"] as? String == name } }
        XCTAssertTrue(waitUntil(timeout: 10) { events("reading").count >= 3 })
        microphone?.unplug()
        microphone = nil
        XCTAssertTrue(waitUntil(timeout: 5) { !events("source_lost").isEmpty }, "\(lines.objects.suffix(3))")
        usleep(1_000_000)
        microphone = try SimulatedDevice(name: "usbmic", serverName: server.name, type: .usbAudio, channels: 1)
        defer { microphone?.unplug() }
        XCTAssertTrue(waitUntil(timeout: 5) { !events("source_back").isEmpty }, "\(lines.objects.suffix(3))")
        let readings = events("reading").count
        XCTAssertTrue(waitUntil(timeout: 5) { events("reading").count >= readings + 3 }, "readings go on")
        meter.interrupt()
        meter.waitUntilExit()
        XCTAssertEqual(meter.terminationStatus, 0)
        let lost = try XCTUnwrap(events("source_lost").first), back = try XCTUnwrap(events("source_back").first)
        XCTAssertEqual(lost["ports"] as? [String], ["usbmic:capture_1"])
        XCTAssertEqual(back["ports"] as? [String], ["usbmic:capture_1"])
        XCTAssertEqual(back["returned"] as? Bool, true)
        let away = try XCTUnwrap(back["away_seconds"] as? Double)
        XCTAssertGreaterThan(away, 0.9, "\(back)")
        XCTAssertLessThan(away, 3, "\(back)")
        XCTAssertEqual(events("source_lost").count, 1)
    }
}

/// `jas meter`'s dead-air alarm: nothing on the port for longer than the hold, then a tone.
final class MeterDeadAirTests: JackTestCase {
    func testDeadAirIsASilenceEventAndItsEndASignalEvent() throws {
        let server = try startServer(period: 256)
        let (meter, lines) = try startMeter(jas, ["--server", server.name, "--ports", "loopback:capture_1",
                                                  "--interval", "100ms", "--silence-threshold", "-60", "--silence-hold", "0.5s"])
        defer { if meter.isRunning { meter.terminate() } }
        func events(_ name: String) -> [[String: Any]] { lines.objects.filter { $0["event"] as? String == name } }
        XCTAssertTrue(waitUntil(timeout: 10) { !events("silence").isEmpty }, "\(lines.objects.suffix(3))")
        XCTAssertTrue(events("signal").isEmpty, "a signal before anything played")
        let player = Process()
        player.executableURL = URL(fileURLWithPath: jas)
        player.arguments = ["play", "--server", server.name, "--port", "loopback:playback_1", "--mix"]
        player.standardOutput = FileHandle.nullDevice
        player.standardError = FileHandle.nullDevice
        try player.run()
        defer { if player.isRunning { player.terminate() } }
        XCTAssertTrue(waitUntil(timeout: 10) { !events("signal").isEmpty }, "\(lines.objects.suffix(3))")
        meter.interrupt()
        meter.waitUntilExit()
        XCTAssertEqual(meter.terminationStatus, 0)
        let silence = try XCTUnwrap(events("silence").first), signal = try XCTUnwrap(events("signal").first)
        XCTAssertEqual(silence["channels"] as? [Int], [1])
        XCTAssertGreaterThanOrEqual(silence["silent_seconds"] as? Double ?? 0, 0.5, "\(silence)")
        XCTAssertEqual(signal["channels"] as? [Int], [1])
        XCTAssertGreaterThan(signal["level_dbfs"] as? Double ?? -200, -60, "\(signal)")
        // The silence is announced once it has lasted the hold; the signal ends it
        // and says how long it lasted in all: from the silence's start to the
        // signal's reading. That can be the hold itself, when the tone arrives in
        // the very next reading.
        let silentSeconds = try XCTUnwrap(signal["silent_seconds"] as? Double), held = try XCTUnwrap(silence["silent_seconds"] as? Double)
        let began = try XCTUnwrap(silence["seconds"] as? Double), ended = try XCTUnwrap(signal["seconds"] as? Double)
        XCTAssertGreaterThanOrEqual(silentSeconds, held, "\(signal) after \(silence)")
        XCTAssertEqual(silentSeconds, ended - began, accuracy: DeadAirWatch.tick, "\(signal) after \(silence)")
        XCTAssertEqual(events("silence").count, 1)
    }
}
