import Foundation
import JackRuntime
import JackTestSupport
import Recording
import SoundFile
import Synchronization
import XCTest

/// A disk that stalls: `jas record` writes FLAC into a FIFO whose reader (the
/// test) stops reading for a while, so the disk thread blocks in write(2)
/// exactly as on a stalled disk. A stall shorter than the ring loses nothing;
/// a longer one loses exactly the frames the log reports, written as silence.
final class RecordStallTests: JackTestCase {
    func testStallShorterThanTheRingLosesNothing() throws {
        let outcome = try recordThroughStalledFIFO(bufferSeconds: 2, stallSeconds: 1)
        XCTAssertEqual(outcome.summary["overruns"] as? Int, 0)
        XCTAssertEqual(outcome.summary["overrun_frames"] as? Int, 0)
        XCTAssertTrue(outcome.overrunGaps.isEmpty)
        XCTAssertEqual(outcome.comparison.sameCycle, outcome.comparison.total, outcome.comparison.firstMismatch ?? "")
    }

    func testStallLongerThanTheRingLosesExactlyWhatTheLogSays() throws {
        let outcome = try recordThroughStalledFIFO(bufferSeconds: 0.5, stallSeconds: 2.5)
        let overruns = try XCTUnwrap(outcome.summary["overruns"] as? Int)
        XCTAssertGreaterThanOrEqual(overruns, 1)
        XCTAssertEqual(outcome.overrunGaps.count, overruns)
        let lost = outcome.overrunGaps.reduce(0) { $0 + $1.frames }
        XCTAssertEqual(outcome.summary["overrun_frames"] as? Int, lost)
        // The stall lasted 2.5 s; the ring held about 0.7 s of it.
        XCTAssertGreaterThan(lost, 48000)
        XCTAssertLessThan(lost, Int(2.5 * 48000))
        // Every lost frame is silence where the log says, every other frame is what was sent.
        let comparison = outcome.comparison
        XCTAssertEqual(comparison.mismatched, 0, comparison.firstMismatch ?? "")
        XCTAssertEqual(comparison.withoutSource, 0)
        XCTAssertGreaterThanOrEqual(comparison.silentGaps * 256, lost - 2 * 256)
        XCTAssertEqual(comparison.sameCycle + comparison.silentGaps, comparison.total)
        print("stall 2.5 s with a 0.5 s ring: \(overruns) overrun(s), \(lost) frames written as silence")
    }

    private struct Outcome {
        var summary: [String: Any]
        var overrunGaps: [(at: Int, frames: Int)]
        var comparison: SignalSender.Comparison
    }

    /// Records 5 s of 2 channels straight from a sender (24-bit grid, FLAC is
    /// exact) into a FIFO; the reader stops for `stallSeconds` from the second second.
    private func recordThroughStalledFIFO(bufferSeconds: Double, stallSeconds: Double) throws -> Outcome {
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 9, onTwentyFourBitGrid: true)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = "\(folder)/take.flac"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let reader = FIFOReader(path: fifo, copyTo: "\(folder)/received.flac")
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "signal-sender:out_*", "--output", fifo, "--format", "flac",
            "--bits", "24", "--for", "5", "--buffer", String(bufferSeconds)])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        XCTAssertTrue(waitUntil(timeout: 20) { recorder.framesWritten >= 48_000 }, "1 s recorded: \(recorder.objects.suffix(2))")
        reader.pause(for: stallSeconds)
        let summary = try XCTUnwrap(recorder.finish(timeout: 30), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertTrue(reader.waitUntilDone(timeout: 10))
        XCTAssertEqual(summary["frames_written"] as? Int, 5 * 48000)

        let file = try SoundFileReader(path: "\(folder)/received.flac")
        let samples = file.readAll()
        XCTAssertEqual(samples.count, 5 * 48000 * 2)
        let log = logEvents(try XCTUnwrap(summary["log_path"] as? String)).filter { $0["event"] as? String == "gap" }
        let gaps = log.map { (at: $0["at_frame"] as! Int, frames: $0["frames"] as! Int) }
        let overrunGaps = zip(log, gaps).filter { $0.0["reason"] as? String == "overrun" }.map(\.1)
        let first = UInt32(try XCTUnwrap(summary["first_frame_time"] as? Int))
        let comparison = sender.compare(samples, channels: 2, firstFrameTime: first, period: 256, gaps: gaps)
        return Outcome(summary: summary, overrunGaps: overrunGaps, comparison: comparison)
    }
}

/// Reads a FIFO on its own thread into a file, and can stop reading for a while.
final class FIFOReader: @unchecked Sendable {
    private let resumeAt = Mutex<ContinuousClock.Instant>(.now)
    private let done = DispatchSemaphore(value: 0)

    init(path: String, copyTo destination: String) {
        Thread.detachNewThread { [self] in
            let input = open(path, O_RDONLY)
            _ = FileManager.default.createFile(atPath: destination, contents: nil)
            let output = FileHandle(forWritingAtPath: destination)
            var buffer = [UInt8](repeating: 0, count: 65536)
            while input >= 0 {
                let wait = (resumeAt.withLock { $0 } - ContinuousClock.now).inSeconds
                if wait > 0 { usleep(UInt32(min(wait, 0.05) * 1_000_000)); continue }
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                output?.write(Data(buffer[0..<count]))
            }
            if input >= 0 { close(input) }
            try? output?.close()
            done.signal()
        }
    }

    /// Stops reading for `seconds` from now.
    func pause(for seconds: Double) { resumeAt.withLock { $0 = .now + .seconds(seconds) } }

    /// Waits until the writer closed the FIFO and everything was read.
    func waitUntilDone(timeout: Double) -> Bool { done.wait(timeout: .now() + timeout) == .success }
}
