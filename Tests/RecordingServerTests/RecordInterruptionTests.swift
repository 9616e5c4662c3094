import Foundation
import JackTestSupport
import XCTest

/// A call interrupts a take: the recorder stops hearing, writes the time it
/// was silenced as silence of its length (logged with who interrupted), tries
/// to reactivate when the interruption ends, and a `--for` take ends on time.
/// Real processes: `jas record` and `jas interrupt --as call`.
final class RecordInterruptionTests: JackTestCase {
    func testACallInTheMiddleOfATakeIsALoggedGapAndTheTakeEndsOnTime() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let started = Date()
        let recorder = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "loopback:capture_1",
                                                               "--output", "\(folder)/take.wav", "--for", "6"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        let recordingAt = Date()
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.framesWritten >= 72_000 }, "1.5 s recorded: \(recorder.objects.suffix(2))")
        let callAt = Double(recorder.framesWritten) / 48000
        let call = try run([jas, "interrupt", "--server", server.name, "--as", "call", "--for", "2"])
        XCTAssertEqual(call.status, 0, call.output)
        let summary = try XCTUnwrap(recorder.finish(timeout: 20), recorder.stderr)
        let ended = Date()
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertEqual(summary["frames_written"] as? Int, 6 * 48000, "the timeline is 6 s: \(summary)")
        XCTAssertLessThan(ended.timeIntervalSince(recordingAt), 6 + 2, "the take ran on past its 6 s")
        XCTAssertEqual(summary["interruptions"] as? Int, 1, "\(summary)")

        let log = logEvents("\(folder)/take.log")
        let interrupted = try XCTUnwrap(log.first { $0["event"] as? String == "interrupted" }, "\(log)")
        XCTAssertEqual(interrupted["by"] as? String, "jas-interrupt")
        XCTAssertNotNil(log.first { $0["event"] as? String == "resumed" }, "it reactivated: \(log)")
        let gap = try XCTUnwrap(log.first { $0["event"] as? String == "gap" && $0["reason"] as? String == "interrupted" },
                                "\(log)")
        XCTAssertEqual(gap["by"] as? String, "jas-interrupt")
        let seconds = Double(try XCTUnwrap(gap["frames"] as? Int)) / 48000
        // The call held the audio 2 s; activation and arbitration on either side add a little.
        XCTAssertEqual(seconds, 2, accuracy: 0.6, "\(gap)")
        XCTAssertEqual(summary["interruption_frames"] as? Int, gap["frames"] as? Int)
        // Where it sits: where the take was when the call began (its progress line up to 0.25 s old,
        // the interrupter's start).
        let at = Double(try XCTUnwrap(gap["at_frame"] as? Int)) / 48000
        XCTAssertEqual(at, callAt + 0.3, accuracy: 0.6, "\(gap): the call began after \(callAt) s")
        print(String(format: "interrupted take: gap %.3f s at %.3f s; the take ended %.2f s after it began recording "
                     + "(%.2f s after the command started)", seconds, at, ended.timeIntervalSince(recordingAt),
                     ended.timeIntervalSince(started)))
    }

    func testATakeThatIsStillInterruptedAtItsEndEndsOnTimeWithTheGapToTheEnd() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorder = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "loopback:capture_1",
                                                               "--output", "\(folder)/take.wav", "--for", "3"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        let recordingAt = Date()
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.framesWritten >= 48_000 }, "1 s recorded: \(recorder.objects.suffix(2))")
        let callAt = Double(recorder.framesWritten) / 48000
        let call = Process()
        call.executableURL = URL(fileURLWithPath: jas)
        call.arguments = ["interrupt", "--server", server.name, "--as", "call", "--for", "20"]
        call.standardOutput = FileHandle.nullDevice
        call.standardError = FileHandle.nullDevice
        try call.run()
        defer { if call.isRunning { call.terminate() } }
        let summary = try XCTUnwrap(recorder.finish(timeout: 15), recorder.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(recordingAt), 3 + 1.5, "the take waited for the call to end")
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertEqual(summary["frames_written"] as? Int, 3 * 48000, "\(summary)")
        let log = logEvents("\(folder)/take.log")
        let gap = try XCTUnwrap(log.first { $0["event"] as? String == "gap" && $0["reason"] as? String == "interrupted" },
                                "\(log)")
        XCTAssertTrue(gap["resumed_frame_time"] is NSNull, "\(gap)")
        // From the call (its progress line up to 0.25 s old, the interrupter's start) to the end.
        XCTAssertEqual(Double(try XCTUnwrap(gap["frames"] as? Int)) / 48000, 3 - callAt - 0.3, accuracy: 0.5,
                       "\(gap): the call began after \(callAt) s")
        XCTAssertEqual((log.last?["event"] as? String), "stopped")
        XCTAssertEqual((log.last?["reason"] as? String), "duration reached")
    }
}
