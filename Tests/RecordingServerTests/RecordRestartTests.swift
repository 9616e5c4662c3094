import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// jackd killed and restarted in the middle of a recording: `jas record`
/// keeps going, writes the time the server was away as silence (so the file
/// stays as long as the wall-clock time it covers), logs it, and records
/// bit-exact again once the server and the sender are back.
final class RecordRestartTests: JackTestCase {
    func testServerRestartIsAGapOfTheRightLength() throws {
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 13)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "signal-sender:out_*", "--output", "\(folder)/take.wav"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        let started = Date()
        let firstClock = try ServerClock(serverName: server.name)
        // 1.5 s recorded before the kill (as the take counts them: on a loaded machine wall time runs ahead).
        XCTAssertTrue(waitUntil(timeout: 30) { recorder.framesWritten >= 72_000 }, "\(recorder.objects.suffix(3))")
        let killedAt = Date()
        let firstServerLost = firstClock.secondsLost()
        server.kill()
        usleep(1_500_000)
        let restartedAt = Date()
        _ = try startServer(name: server.name, period: 256, serverArguments: ["-S"])
        let secondClock = try ServerClock(serverName: server.name)
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("server_back") != nil }, recorder.stderr)
        // The sender comes back too (a session) and the recorder finds its ports again: record on until
        // the take's last second lies wholly after the first second with the sender's signal in it.
        let soundingAgain = waitUntil(timeout: 30) {
            recorder.framesWhenSoundingAfter("server_back").map { recorder.framesWritten >= $0 + 60_000 } ?? false
        }
        if !soundingAgain {
            // Which side did not come back: the sender's session, the recorder's connections, or the signal.
            let graph = (try? run(["jack_lsp", "-s", server.name, "-c"], timeout: 10).output) ?? "jack_lsp failed"
            XCTFail("the sender's signal was not recorded again after the restart. The sender is "
                    + "\(sender.session.isActive ? "active" : "not active"); the server's ports and connections:\n"
                    + "\(graph)\nthe take's events: \(recorder.objects.filter { $0["event"] as? String != "progress" })"
                    + "\nits last progress: \(recorder.objects.last { $0["event"] as? String == "progress" } ?? [:])"
                    + "\nits stderr: \(recorder.stderr)")
        }
        let stoppedAt = Date()
        let secondServerLost = secondClock.secondsLost()
        recorder.process.terminate()
        let summary = try XCTUnwrap(recorder.finish(), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, "SIGTERM stops cleanly: \(recorder.stderr)")

        let log = logEvents(try XCTUnwrap(summary["log_path"] as? String))
        let names = log.compactMap { $0["event"] as? String }
        XCTAssertTrue(names.contains("server_lost") && names.contains("server_back"), "\(names)")
        let restartGaps = log.filter { $0["event"] as? String == "gap" && $0["reason"] as? String == "server-restart" }
        XCTAssertEqual(restartGaps.count, 1, "\(log)")
        let gap = try XCTUnwrap(restartGaps.first)
        let gapFrames = try XCTUnwrap(gap["frames"] as? Int)
        let downtime = restartedAt.timeIntervalSince(killedAt)
        // The server was away 1.5 s; the first new cycle comes when it accepts clients and the session reactivated.
        XCTAssertGreaterThanOrEqual(Double(gapFrames) / 48000, downtime - 0.1, "gap \(gapFrames) frames")
        XCTAssertLessThanOrEqual(Double(gapFrames) / 48000, downtime + 1.0, "gap \(gapFrames) frames")
        // The timeline is the wall clock: the file is as long as the time it
        // covers, less the time jackd's own clock lost while it ran (the dummy
        // backend, late on a loaded machine, restarts its clock instead of
        // catching up, and no client can record time its server skipped).
        // A stall of the server's clock longer than a quarter second is the exception: the take
        // writes it as a logged gap of silence (seen beside a busy core: a jackd -S whose sync wait
        // failed lost 6.2 s in such stalls after its restart).
        let frames = try XCTUnwrap(summary["frames_written"] as? Int)
        let stalls = Double(gapRanges(log.filter { $0["reason"] as? String == "stall" }).map(\.count).reduce(0, +)) / 48000
        let covered = stoppedAt.timeIntervalSince(started) - firstServerLost - secondServerLost + stalls
        XCTAssertEqual(Double(frames) / 48000, covered, accuracy: 0.3,
                       "file \(frames) frames for \(covered) s (jackd's clocks lost \(firstServerLost) and "
                       + "\(secondServerLost) s, \(stalls) s of it written as stalls)")

        // Bit-exact before the loss and in the last second, after the return.
        let samples = try SoundFileReader(path: try XCTUnwrap(summary["path"] as? String)).readAll()
        XCTAssertEqual(samples.count, frames * 2)
        let first = UInt32(try XCTUnwrap(summary["first_frame_time"] as? Int))
        let lostAt = try XCTUnwrap(gap["at_frame"] as? Int)
        let before = sender.compare(Array(samples[0..<(lostAt / 256 * 256 * 2)]), channels: 2, firstFrameTime: first,
                                    period: 256)
        // Every cycle exact, unless jackd reported xruns in the take: a late
        // cycle on a loaded machine (jackd without real-time scheduling) is
        // read or refreshed mid-cycle, and then at most 2 % may differ.
        let xruns = summary["xruns"] as? Int ?? 0
        func checkExact(_ part: SignalSender.Comparison, _ name: String) {
            if xruns == 0 {
                XCTAssertEqual(part.sameCycle, part.total, "\(name): \(part.firstMismatch ?? "")")
            } else {
                XCTAssertGreaterThanOrEqual(part.sameCycle * 100, part.total * 98,
                                            "\(name), \(xruns) xruns: \(part.firstMismatch ?? "")")
            }
        }
        checkExact(before, "before the loss")
        XCTAssertGreaterThan(before.total, 2 * 48000 / 256)
        // The last second, or what follows the take's last gap in it, placed by that gap's frame time.
        let lastGap = try XCTUnwrap(log.filter { $0["event"] as? String == "gap" }
            .max { ($0["at_frame"] as? Int ?? 0) < ($1["at_frame"] as? Int ?? 0) })
        let resumedAt = try XCTUnwrap(lastGap["at_frame"] as? Int) + (try XCTUnwrap(lastGap["frames"] as? Int))
        let resumedFrame = UInt32(try XCTUnwrap(lastGap["resumed_frame_time"] as? Int))
        let tail = max(frames - 48000, resumedAt)
        XCTAssertGreaterThanOrEqual(frames - tail, 12000, "a gap in the take's last quarter second: \(lastGap)")
        let after = sender.compare(Array(samples[(tail * 2)...]), channels: 2,
                                   firstFrameTime: resumedFrame &+ UInt32(tail - resumedAt), period: 256)
        checkExact(after, "after the return")
        print("restart: server away \(String(format: "%.2f", downtime)) s, gap \(gapFrames) frames "
              + "(\(String(format: "%.3f", Double(gapFrames) / 48000)) s); file \(frames) frames for "
              + "\(String(format: "%.2f", covered)) s of wall clock")
    }

    /// The wall clock stepped an hour ahead while the server was away (NTP
    /// setting right a clock that was behind): the downtime the take logs
    /// (`server_back`) is still the time the server was away, measured on
    /// the monotonic clock. Taken from the wall clock, it read an hour more.
    /// (Ahead, not back: the hook steps this process's clock alone, and
    /// libjack hands the kernel deadlines on the wall clock, which the
    /// kernel's clock, not stepped back, would then find long past.)
    func testADowntimeAcrossAWallClockStepIsTheTimeTheServerWasAway() throws {
        let server = try startServer(period: 256)
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 14)
        defer { sender.session.close() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let step = "\(folder)/wall-clock-step"
        try "0".write(toFile: step, atomically: true, encoding: .utf8)
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "signal-sender:out_*", "--output", "\(folder)/take.wav"],
            environment: ["LD_PRELOAD": try HookLibrary.steppedWallClock.path(), "WALL_CLOCK_STEP_FILE": step])
        defer { kill(recorder.process.processIdentifier, SIGTERM) }
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.framesWritten >= 24_000 }, recorder.stderr)
        let killedAt = Date()
        server.kill()
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("server_lost") != nil }, recorder.stderr)
        try "3600".write(toFile: step, atomically: true, encoding: .utf8)
        usleep(500_000)
        _ = try startServer(name: server.name, period: 256)
        XCTAssertTrue(waitUntil(timeout: 15) { recorder.event("server_back") != nil }, recorder.stderr)
        let away = Date().timeIntervalSince(killedAt)
        let downtime = try XCTUnwrap(recorder.event("server_back")?["downtime_seconds"] as? Double)
        XCTAssertGreaterThanOrEqual(downtime, 0.5, "the server was away at least the half second the test waited")
        XCTAssertLessThanOrEqual(downtime, away, "the logged downtime is longer than the server was away (\(away) s)")
    }
}

/// When the server comes back at another sample rate, the recording goes on
/// in a new file at that rate, and the log says where.
final class RecordRateChangeTests: JackTestCase {
    func testRestartAtAnotherRateContinuesInANewFileAndNeverReplacesOne() throws {
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A part 2 left from an earlier take: the new part must not replace it.
        let leftover = Data("an earlier take's part 2".utf8)
        try leftover.write(to: URL(fileURLWithPath: "\(folder)/take-part2.wav"))
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "system:capture_*", "--output", "\(folder)/take.wav"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        // A second in the first file (the test asks for more than 36000 frames).
        XCTAssertTrue(waitUntil(timeout: 30) { recorder.framesWritten >= 48000 }, "\(recorder.objects.suffix(3))")
        server.kill()
        _ = try startServer(name: server.name, sampleRate: 44100, period: 256, serverArguments: ["-S"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("new_file") != nil }, recorder.stderr)
        // A second or more in the new one: two seconds past the progress last
        // said before it (that one may be a second old; no gap frames are
        // written across a change of rate).
        let atNewFile = recorder.framesWritten
        XCTAssertTrue(waitUntil(timeout: 30) { recorder.framesWritten >= atNewFile + 96000 }, "\(recorder.objects.suffix(3))")
        recorder.process.terminate()
        let summary = try XCTUnwrap(recorder.finish(), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        let paths = try XCTUnwrap(summary["paths"] as? [String])
        XCTAssertEqual(paths, ["\(folder)/take.wav", "\(folder)/take-part3.wav"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: "\(folder)/take-part2.wav")), leftover)
        let skipped = try XCTUnwrap(recorder.event("part_skipped"), "\(recorder.objects)")
        XCTAssertTrue((skipped["reason"] as? String ?? "").contains("take-part2.wav"), "\(skipped)")
        let first = try SoundFileReader(path: paths[0])
        let second = try SoundFileReader(path: paths[1])
        XCTAssertEqual(first.sampleRate, 48000)
        XCTAssertEqual(second.sampleRate, 44100)
        XCTAssertGreaterThan(first.frames, 36000)
        XCTAssertGreaterThan(second.frames, 22050)
        let newFile = try XCTUnwrap(recorder.event("new_file"))
        XCTAssertEqual(newFile["sample_rate"] as? Int, 44100)
        XCTAssertEqual(newFile["path"] as? String, paths[1])
    }
}

/// A server's frame clock against the wall clock, from when it is made: the
/// seconds the server's clock fell behind (a dummy backend that runs late
/// does not catch up).
struct ServerClock {
    let client: Client
    let frame: UInt32
    let time: Date
    let sampleRate: Double

    init(serverName: String) throws {
        client = try Client(name: "clock-probe", serverName: serverName)
        sampleRate = Double(client.sampleRate)
        time = Date()
        frame = client.frameTime
    }

    /// Seconds lost so far; closes the probe.
    func secondsLost() -> Double {
        let now = client.frameTime
        let elapsed = Date().timeIntervalSince(time)
        client.close()
        return max(0, elapsed - Double(now &- frame) / sampleRate)
    }
}
