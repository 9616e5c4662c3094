import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// Starting later than the capture: pre-roll before a start command, and a
/// level trigger that starts at the first frame reaching it.
final class RecordStartTests: JackTestCase {
    func testPrerollHoldsTheSecondBeforeTheStartCommand() throws {
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 21)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "signal-sender:out_*", "--output", "\(folder)/take.wav",
            "--preroll", "1", "--for", "2"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("armed") != nil }, recorder.stderr)
        // 1.5 s of the server's frames go by while armed (more than the pre-roll holds).
        let client = try XCTUnwrap(sender.session.client)
        let armedFrame = client.cycleFrameTime
        XCTAssertTrue(waitUntil(timeout: 10) { Int32(bitPattern: client.cycleFrameTime &- armedFrame) >= 72_000 })
        XCTAssertNil(recorder.event("started"), "armed: nothing recorded before the start command")
        let commandFrame = client.cycleFrameTime
        kill(recorder.process.processIdentifier, SIGUSR1)
        let summary = try XCTUnwrap(recorder.finish(), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertEqual(summary["preroll_frames"] as? Int, 48000)
        XCTAssertEqual(summary["frames_written"] as? Int, 96000)
        let first = UInt32(try XCTUnwrap(summary["first_frame_time"] as? Int))
        // The file begins one second before the cycle in which the start
        // command arrived, which took a moment (at most a tenth of a second).
        let lead = Int(Int32(bitPattern: commandFrame &- first))
        XCTAssertGreaterThanOrEqual(lead, 48000 - 4800)
        XCTAssertLessThanOrEqual(lead, 48000)
        let samples = try SoundFileReader(path: "\(folder)/take.wav").readAll()
        let result = sender.compare(samples, channels: 2, firstFrameTime: first, period: 256)
        XCTAssertEqual(result.sameCycle, result.total, result.firstMismatch ?? "")
        XCTAssertEqual(result.total, 2 * 96000 / 256)
    }

    func testTriggerStartsAtTheFirstFrameReachingTheLevel() throws {
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 34)
        let client = try XCTUnwrap(sender.session.client)
        // Silent until the recorder is armed (however long its start takes
        // on a loaded machine), then half a second more, not on a period
        // boundary; then the signal.
        sender.setOnset(client.cycleFrameTime &+ 600 * 48000)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "signal-sender:out_*", "--output", "\(folder)/take.wav",
            "--trigger", "-20dBFS", "--preroll", "0.1", "--for", "1"])
        XCTAssertTrue(waitUntil(timeout: 30) { recorder.event("armed") != nil }, recorder.stderr)
        let onset = client.cycleFrameTime &+ 24000 &+ 101
        sender.setOnset(onset)
        let summary = try XCTUnwrap(recorder.finish(), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertNotNil(recorder.event("armed"))
        // The first frame at which a channel reaches -20 dBFS (0.1), found independently.
        let level = Float(pow(10.0, -20.0 / 20))
        let trigger = try XCTUnwrap((0..<48000).first { offset in
            (0..<2).contains { abs(sender.sample(channel: $0, frame: onset &+ UInt32(offset))) >= level }
        })
        XCTAssertEqual(summary["preroll_frames"] as? Int, 4800)
        XCTAssertEqual(summary["first_frame_time"] as? Int, Int(onset &+ UInt32(trigger) &- 4800))
        let samples = try SoundFileReader(path: "\(folder)/take.wav").readAll()
        XCTAssertEqual(samples.count, 2 * 48000)
        // The pre-roll: silence up to the onset, then the signal; the first
        // frame after the pre-roll is the one that reached the level.
        let afterPreroll = 4800 * 2
        XCTAssertTrue((0..<2).contains { abs(samples[afterPreroll + $0]) >= level })
        let first = UInt32(try XCTUnwrap(summary["first_frame_time"] as? Int))
        let result = sender.compare(samples, channels: 2, firstFrameTime: first, period: 256)
        XCTAssertEqual(result.sameCycle, result.total, result.firstMismatch ?? "")
        XCTAssertEqual(samples[0..<((4800 - trigger) * 2)].filter { $0 != 0 }.count, 0, "silence before the onset")
    }

    func testBroadcastTimeReferenceIsTheCaptureTimeLessTheLatency() throws {
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "system:capture_*", "--output", "\(folder)/take.wav", "--for", "1"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        let seenAt = Date()
        let summary = try XCTUnwrap(recorder.finish(), recorder.stderr)
        // system:capture_N of the dummy backend report one period of capture latency.
        XCTAssertEqual(summary["capture_latency_frames"] as? Int, 256)
        let reference = try XCTUnwrap(summary["time_reference"] as? Int)
        let file = try SoundFileReader(path: "\(folder)/take.wav")
        XCTAssertEqual(file.broadcastTimeReference, UInt64(reference))
        let midnight = Calendar.current.startOfDay(for: seenAt)
        let expected = seenAt.timeIntervalSince(midnight)
        XCTAssertEqual(Double(reference) / 48000, expected, accuracy: 0.5)
        XCTAssertLessThanOrEqual(Double(reference) / 48000, expected, "the first frame was captured before it was seen")
    }
}
