import Foundation
import JackTestSupport
import XCTest

/// Signals a recorder gets from people and supervisors: at any moment of its
/// start-up, and the SIGHUP of a closed terminal. Real `jas record` processes.
final class RecordSignalTests: JackTestCase {
    func testSIGTERMAtAnyMomentOfStartUpEndsTheRecorder() throws {
        // One was lost now and then 19–27 ms in, between a signal's default
        // action being set aside and its handler taking over: the take then ran
        // until SIGKILL. Every moment of the first 100 ms, every 2–10 ms.
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let delays = Array(stride(from: 0, through: 40, by: 2)) + [50, 60, 80, 100]
        var outcomes: [String] = []
        for (trial, delay) in delays.enumerated() {
            let take = "\(folder)/take-\(trial).wav"
            let recorder = Process()
            recorder.executableURL = URL(fileURLWithPath: jas)
            recorder.arguments = ["record", "--server", server.name, "--ports", "loopback:capture_1", "--output", take]
            recorder.standardOutput = FileHandle.nullDevice
            recorder.standardError = FileHandle.nullDevice
            try recorder.run()
            usleep(useconds_t(delay * 1000))
            kill(recorder.processIdentifier, SIGTERM)
            let ended = waitUntil(timeout: 15) { !recorder.isRunning }
            if !ended { kill(recorder.processIdentifier, SIGKILL) }
            recorder.waitUntilExit()
            XCTAssertTrue(ended, "SIGTERM \(delay) ms after start was lost: the recorder ran on")
            // Before jas takes its signals, SIGTERM ends it as it ends any
            // program; then, before the take is set up, jas ends with 143 as
            // a shell would report it; from then on the take is finished
            // cleanly (status 0). Never anything else.
            let signalled = recorder.terminationReason == .uncaughtSignal && recorder.terminationStatus == SIGTERM
            let early = recorder.terminationReason == .exit && recorder.terminationStatus == 128 + SIGTERM
            let clean = recorder.terminationReason == .exit && recorder.terminationStatus == 0
            XCTAssertTrue(signalled || early || clean, "\(delay) ms: \(recorder.terminationReason) \(recorder.terminationStatus)")
            outcomes.append(signalled ? "signal" : early ? "early" : "clean")
            if !clean { XCTAssertFalse(FileManager.default.fileExists(atPath: take), "\(delay) ms: a take was left") }
            if clean, FileManager.default.fileExists(atPath: take) {
                XCTAssertNoThrow(try SoundFileFrames.count(take), "\(delay) ms: the take is not a whole file")
            }
        }
        print("SIGTERM during start-up: " + zip(delays, outcomes).map { "\($0) ms \($1)" }.joined(separator: ", "))
        // How far into start-up the take begins depends on the machine (a
        // loaded CI box reached 100 ms still "early"), so the clean phase is
        // reached by waiting for the take to start, not by a delay.
        let take = "\(folder)/take-started.wav"
        let recorder = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "loopback:capture_1", "--output", take])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("recording") != nil }, recorder.stderr)
        kill(recorder.process.processIdentifier, SIGTERM)
        XCTAssertTrue(waitUntil(timeout: 15) { !recorder.process.isRunning }, "SIGTERM once recording was lost: \(recorder.stderr)")
        let summary = try XCTUnwrap(recorder.finish(timeout: 1), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationReason, .exit)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertEqual(try SoundFileFrames.count(take), summary["frames_written"] as? Int)
    }

    func testSIGHUPFinishesTheTakeAndTheLogSaysWhy() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let take = "\(folder)/take.wav"
        let recorder = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "loopback:capture_1",
                                                               "--output", take, "--for", "60"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("recording") != nil }, recorder.stderr)
        XCTAssertTrue(waitUntil(timeout: 20) { recorder.framesWritten >= 24_000 }, "0.5 s recorded: \(recorder.objects.suffix(2))")
        kill(recorder.process.processIdentifier, SIGHUP)
        let summary = try XCTUnwrap(recorder.finish(timeout: 15), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationReason, .exit)
        XCTAssertEqual(recorder.process.terminationStatus, 0)
        let written = try XCTUnwrap(summary["frames_written"] as? Int)
        XCTAssertGreaterThan(written, 48000 / 4)
        XCTAssertEqual(try SoundFileFrames.count(take), written)
        let stopped = logEvents("\(folder)/take.log").first { $0["event"] as? String == "stopped" }
        XCTAssertEqual(stopped?["frames_written"] as? Int, written)
        XCTAssertEqual(stopped?["reason"] as? String, "SIGHUP (terminal closed)")
    }
}
