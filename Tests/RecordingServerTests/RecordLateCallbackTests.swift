import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// A recorder run late: an asynchronous server, and the recorded port behind
/// a client that stalls its callback for a period and a half now and then.
/// jackd runs the recorder's cycle for the stalled one after the next cycle
/// began, so it reads the next cycle's frame time, and its next callback reads
/// the same one again (docs/JACK-FINDINGS.md): the read ahead that
/// `CaptureTimeline.place` must tell from a gap. Before it did, each stall
/// wrote a period of silence as a gap and left the rest of the take a period
/// late (644 of 748 periods misplaced here). The stalled client itself reads
/// its source's next period, so one period per stall holds the sound of the
/// period after it; that is what was in the port, and the test allows it.
final class RecordLateCallbackTests: JackTestCase {
    func testARecorderBehindAStalledClientKeepsEveryFrameAtItsFrameTime() throws {
        let period = 256
        let server = try startServer(period: period)
        let sender = try SignalSender(serverName: server.name, channels: 1, seed: 11)
        defer { sender.session.close() }
        let delay = 16
        let staller = try DelayLineClient(name: "staller", serverName: server.name, delay: Double(delay))
        try staller.listen(to: "signal-sender:out_1")
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = Recorder.Configuration(outputPath: "\(folder)/take.wav")
        configuration.serverName = server.name
        configuration.portPatterns = ["staller:out"]
        configuration.format = RecordingFormat(container: .wav, sampleFormat: .float32)
        configuration.duration = 4
        let recorder = Recorder(configuration: configuration)
        try recorder.prepare()
        defer { recorder.stop() }
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.progress().framesWritten >= 24000 }, "the take did not start")
        // Eight stalls of a period and a half, a quarter second apart (a stimulus, not a wait).
        let stalls = 8
        for _ in 0..<stalls {
            staller.stall(seconds: 1.5 * Double(period) / 48000)
            usleep(250_000)
        }
        XCTAssertTrue(recorder.waitUntilFinished(timeout: 30), "the take did not end")
        recorder.stop()
        let summary = recorder.summary
        let first = try XCTUnwrap(summary.firstFrameTime)
        let samples = try SoundFileReader(path: try XCTUnwrap(summary.paths.first)).readAll()
        XCTAssertEqual(samples.count, 4 * 48000)
        let log = logEvents(try XCTUnwrap(summary.logPath))
        let gaps = gapRanges(log)
        let xruns = log.filter { $0["event"] as? String == "xrun" }.count
        XCTAssertGreaterThan(xruns, 0, "the stalls made no xrun: nothing was late to test")

        /// How far the frame time of the sound at `position` is from where the
        /// take puts it (its first frame time plus the position), in frames:
        /// found by matching 64 frames with what was sent (through the delay
        /// line), within eight periods either way. nil: no match there.
        let window = 64
        func misplacement(at position: Int) -> Int? {
            guard position + window <= samples.count,
                  !gaps.contains(where: { $0.overlaps(position..<(position + window)) }) else { return nil }
            return (-8 * period...8 * period).first { offset in
                let start = first &+ UInt32(truncatingIfNeeded: position + offset - delay)
                return (0..<window).allSatisfy { frame in
                    samples[position + frame].bitPattern == sender.sample(channel: 0, frame: start &+ UInt32(frame)).bitPattern
                }
            }
        }
        // Every period of the take: its sound is at its frame time, or in a
        // gap, or (at most once per stall) the sound of the period after it:
        // the stalled client woke past the next cycle's start, when the sender,
        // which does not wait for it, had already written its next period into
        // the buffer the stalled client then read. Nothing else: no period off
        // in the other direction, none two periods off, no shift that lasts.
        let windows = stride(from: window, to: samples.count - 2 * period, by: period).map { ($0, misplacement(at: $0)) }
        let inPlace = windows.filter { $0.1 == 0 }.count
        let readAhead = windows.filter { $0.1 == period }.map { Double($0.0) / 48000 }
        // Right after a logged gap, the sound of a period before it, at most as many periods back as the gap is
        // long (docs/JACK-FINDINGS.md: what the port held when the late run read it; a client cannot tell which
        // side of the gap the lost periods were on).
        func isBehindAfterGap(_ place: (Int, Int?)) -> Bool {
            guard let offset = place.1, offset < 0, offset % period == 0 else { return false }
            return gaps.contains { gap in (place.0 - period...place.0).contains(gap.upperBound) && -offset <= gap.count }
        }
        let behindAfterGap = windows.filter(isBehindAfterGap).map { Double($0.0) / 48000 }
        let misplaced = windows.filter { $0.1 != nil && $0.1 != 0 && $0.1 != period && !isBehindAfterGap($0) }
            .map { (second: Double($0.0) / 48000, frames: $0.1!) }
        let missing = windows.filter { place in
            place.1 == nil && !gaps.contains { $0.overlaps(place.0..<(place.0 + window)) }
        }.map { Double($0.0) / 48000 }
        print("behind a stalled client: \(xruns) xrun(s) logged, gaps \(gaps); of \(windows.count) periods "
              + "\(inPlace) in place, the next period's sound at \(readAhead) s, not found at \(missing) s, "
              + "the period before's sound right after a gap at \(behindAfterGap) s, misplaced \(misplaced)")
        XCTAssertEqual(misplaced.count, 0, "sound away from its frame time (second, frames): \(misplaced); gaps \(gaps)")
        // Each stall (or xrun of load) accounts for at most one such period, and each gap for one period of silence.
        XCTAssertLessThanOrEqual(readAhead.count + behindAfterGap.count, stalls + xruns,
                                 "periods ahead of their frame time at \(readAhead) s, behind at \(behindAfterGap) s")
        XCTAssertLessThanOrEqual(missing.count, stalls + xruns + 2 * gaps.count, "periods not as sent at \(missing) s")
        XCTAssertLessThanOrEqual(gaps.map(\.count).reduce(0, +), (stalls + xruns) * period, "gaps \(gaps)")
    }
}
