import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// The end of a take stopped by a signal is the sender's audio to its last
/// frame. jackd's deactivation disconnects a client's ports one at a time
/// and may run cycles before it stops calling the client, whose inputs are
/// then silent although nothing stopped playing; a recorder that kept those
/// cycles ended some takes with a period or two of silence (seen in 2 of 7
/// runs of the restart test).
final class RecordStopTests: JackTestCase {
    func testTakesStoppedBySIGTERMEndWithTheSendersAudio() throws {
        let period = 64
        let server = try startServer(period: period, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 21)
        defer { sender.session.close() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var silentEnds: [String] = []
        var checked = 0
        for take in 1...8 {
            let recorder = try RecordProcess(jas: jas, arguments: [
                "--server", server.name, "--ports", "signal-sender:out_*", "--output", "\(folder)/take\(take).wav"])
            XCTAssertTrue(waitUntil(timeout: 10) { recorder.framesWritten >= 9600 }, recorder.stderr)
            recorder.process.terminate()
            let summary = try XCTUnwrap(recorder.finish(), recorder.stderr)
            XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
            let samples = try SoundFileReader(path: "\(folder)/take\(take).wav").readAll()
            let frames = samples.count / 2
            // In sync mode (-S) jackd waits for late clients: an xrun (the
            // recorder's own activation makes one on the dummy backend) costs
            // no audio here; a skipped cycle is a logged gap, and such a take is left out.
            guard frames >= 8 * period, summary["gaps"] as? Int == 0 else { continue }
            // The last eight periods, straight from the sender's ports: each the same cycle's.
            checked += 1
            let first = UInt32(try XCTUnwrap(summary["first_frame_time"] as? Int))
            let tail = frames / period * period - 8 * period
            let result = sender.compare(Array(samples[(tail * 2)..<(frames / period * period * 2)]), channels: 2,
                                        firstFrameTime: first &+ UInt32(tail), period: period)
            if result.sameCycle != result.total {
                silentEnds.append("take \(take): \(result.sameCycle) of \(result.total) channel-periods; "
                                  + "\(result.firstMismatch ?? ""); xruns \(summary["xruns"] ?? "?")")
            }
        }
        XCTAssertEqual(silentEnds, [], "takes whose end is not the sender's")
        XCTAssertGreaterThanOrEqual(checked, 4, "takes without gaps, whose end says something")
    }
}

/// Two stops at once (Ctrl-C while the duration's end is being written): the
/// summary either caller reads afterwards is the final one, equal to what
/// the file holds.
final class RecordStopRaceTests: JackTestCase {
    func testASecondStopWaitsForTheFirstSoItsSummaryMatchesTheFile() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = Recorder.Configuration(outputPath: "\(folder)/take.wav")
        configuration.serverName = server.name
        configuration.portPatterns = ["loopback:capture_1"]
        // A slow disk once stopping began: the final drain of the ring takes a while.
        let slow = SlowDisk()
        configuration.onWritten = { _, _ in if slow.isOn { usleep(300_000) } }
        let recorder = Recorder(configuration: configuration)
        try recorder.prepare()
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.progress().framesWritten >= 48000 })
        slow.isOn = true
        let firstDone = DispatchSemaphore(value: 0)
        Thread {
            recorder.stop(reason: "first")
            firstDone.signal()
        }.start()
        usleep(30_000)
        recorder.stop(reason: "second")
        let summary = recorder.summary
        XCTAssertEqual(firstDone.wait(timeout: .now() + 30), .success)
        let file = try SoundFileReader(path: "\(folder)/take.wav")
        XCTAssertEqual(file.frames, summary.framesWritten, "the summary read after the second stop is not the final one")
    }

    /// A stop that comes before the take is set up (a SIGTERM in start-up,
    /// heard before the recorder prepared) leaves nothing behind: the take's
    /// preparation, which would create its files, refuses to begin. (A stop
    /// during the preparation waits for it and finishes the take instead;
    /// `RecordSignalTests` sends SIGTERM at every moment of start-up.)
    func testAStopBeforeTheTakeIsSetUpLeavesNoFile() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = Recorder.Configuration(outputPath: "\(folder)/take.wav")
        configuration.serverName = "nobody-\(getpid())"
        let recorder = Recorder(configuration: configuration)
        recorder.stop(reason: "SIGTERM")
        XCTAssertThrowsError(try recorder.prepare()) { error in
            XCTAssertEqual("\(error)", "\(RecordingError.stoppedBeforeStart)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), [], "a file was made for a stopped take")
    }
}

/// The take `prepare()` returns, and its end. An end (here a remote stop's
/// `end(reason:)`) wakes every waiter at once: two threads blocked in
/// `waitUntilFinished` and a task awaiting `finished()`. (A one-shot
/// semaphore woke only one of them.)
final class RecordTakeEndTests: JackTestCase {
    func testTheRunningTakeSaysWhatItRecordsAndItsEndWakesEveryWaiter() async throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = Recorder.Configuration(outputPath: "\(folder)/take.wav")
        configuration.serverName = server.name
        configuration.portPatterns = ["loopback:capture_1", "loopback:capture_2"]
        let recorder = Recorder(configuration: configuration)
        let take = try recorder.prepare()
        defer { recorder.stop() }
        XCTAssertEqual(take.ports, ["loopback:capture_1", "loopback:capture_2"])
        XCTAssertEqual(take.channels, 2)
        XCTAssertEqual(take.paths, ["\(folder)/take.wav"])
        XCTAssertEqual(take.sampleRate, 48000)
        XCTAssertGreaterThan(take.ringCapacityFrames, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { take.progress().framesWritten >= 4800 }, "the take did not start")

        let woken = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread {
                if recorder.waitUntilFinished(timeout: 30) { woken.signal() }
            }.start()
        }
        let awaited = Task { await take.finished() }
        XCTAssertFalse(recorder.isFinished, "ended before anything ended it")
        recorder.end(reason: "stopped over HTTP")
        XCTAssertEqual(woken.wait(timeout: .now() + 10), .success, "the first thread was not woken")
        XCTAssertEqual(woken.wait(timeout: .now() + 10), .success, "the second thread was not woken")
        await awaited.value
        XCTAssertTrue(recorder.waitUntilFinished(timeout: 0), "a waiter after the end goes on at once")
        recorder.stop()
        XCTAssertEqual(take.summary.stopReason, "stopped over HTTP")
        XCTAssertEqual(take.summary.framesWritten, try SoundFileReader(path: "\(folder)/take.wav").frames)
    }
}

private final class SlowDisk: @unchecked Sendable { // a flag set once by the test, read by the disk thread
    private let flag = NSLock()
    private var on = false
    var isOn: Bool {
        get { flag.lock(); defer { flag.unlock() }; return on }
        set { flag.lock(); on = newValue; flag.unlock() }
    }
}
