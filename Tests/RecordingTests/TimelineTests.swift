@testable import Recording
import XCTest

/// The disk thread's pure parts: how cycles become a whole timeline, the
/// pre-roll history, and which formats can hold what.
final class TimelineTests: XCTestCase {
    private let rate = 48000

    private func cycle(_ frame: UInt32, seconds: Double, epoch: UInt32 = 0, dropped: UInt32 = 0) -> CycleHeader {
        CycleHeader(frameTime: frame, frames: 256, nanoseconds: UInt64(seconds * 1e9), epoch: epoch, droppedBefore: dropped)
    }

    func testContinuousCyclesLeaveNoGap() {
        var timeline = CaptureTimeline(sampleRate: rate)
        XCTAssertEqual(timeline.step(cycle(1000, seconds: 10)), .first)
        XCTAssertEqual(timeline.step(cycle(1256, seconds: 10.0053)), .continuous)
        // Frame times wrap at 2^32 and still follow on.
        var wrapping = CaptureTimeline(sampleRate: rate)
        _ = wrapping.step(cycle(UInt32.max - 100, seconds: 20))
        XCTAssertEqual(wrapping.step(cycle(155, seconds: 20.0053)), .continuous)
        XCTAssertEqual(wrapping.step(cycle(155 + 256 * 2, seconds: 20.016)), .gap(frames: 256, reason: .discontinuity))
    }

    func testDroppedCyclesAreAnOverrunOfExactlyTheirFrames() {
        var timeline = CaptureTimeline(sampleRate: rate)
        _ = timeline.step(cycle(1000, seconds: 10))
        XCTAssertEqual(timeline.step(cycle(1000 + 256 * 4, seconds: 10.021, dropped: 768)), .gap(frames: 768, reason: .overrun))
        XCTAssertEqual(timeline.step(cycle(1000 + 256 * 5, seconds: 10.026, dropped: 768)), .continuous)
    }

    func testSkippedCyclesOnTheSameClockAreADiscontinuity() {
        var timeline = CaptureTimeline(sampleRate: rate)
        _ = timeline.step(cycle(1000, seconds: 10))
        XCTAssertEqual(timeline.step(cycle(1000 + 256 * 3, seconds: 10.016)), .gap(frames: 512, reason: .discontinuity))
    }

    func testANewServerIsMeasuredByTheClock() {
        var timeline = CaptureTimeline(sampleRate: rate)
        _ = timeline.step(cycle(900_000, seconds: 10))
        // Another epoch: frame times start again; the gap is the wall-clock time between the two.
        let step = timeline.step(cycle(4096, seconds: 11.5 + 256.0 / 48000, epoch: 1))
        XCTAssertEqual(step, .gap(frames: 72000, reason: .serverRestart))
        // Even if the loss was not yet noticed (same epoch), frame times that disagree with the clock mean a new server.
        var late = CaptureTimeline(sampleRate: rate)
        _ = late.step(cycle(900_000, seconds: 10))
        XCTAssertEqual(late.step(cycle(4096, seconds: 12 + 256.0 / 48000)), .gap(frames: 96000, reason: .serverRestart))
    }

    func testPrerollHistoryKeepsTheNewestFramesInOrder() {
        var history = PrerollHistory(channels: 2, capacityFrames: 5)
        let first: [Float] = [1, -1, 2, -2, 3, -3]
        first.withUnsafeBufferPointer { history.append($0, frames: 3) }
        XCTAssertEqual(history.count, 3)
        let second: [Float] = [4, -4, 5, -5, 6, -6, 7, -7]
        second.withUnsafeBufferPointer { history.append($0, frames: 4) }
        XCTAssertEqual(history.count, 5)
        var read: [Float] = []
        history.withNewest(4) { piece, _ in read += piece }
        XCTAssertEqual(read, [4, -4, 5, -5, 6, -6, 7, -7])
        history.appendSilence(frames: 2)
        read = []
        history.withNewest(10) { piece, _ in read += piece }
        XCTAssertEqual(read, [5, -5, 6, -6, 7, -7, 0, 0, 0, 0])
        history.clear()
        XCTAssertEqual(history.count, 0)
    }

    func testFormatsRefuseWhatTheyCannotHold() {
        XCTAssertNoThrow(try RecordingFormat(container: .wav, sampleFormat: .float32).validate(channels: 64, sampleRate: 48000))
        XCTAssertNoThrow(try RecordingFormat(container: .rf64, sampleFormat: .int24).validate(channels: 128, sampleRate: 96000))
        XCTAssertNoThrow(try RecordingFormat(container: .flac, sampleFormat: .int16).validate(channels: 8, sampleRate: 48000))
        XCTAssertThrowsError(try RecordingFormat(container: .flac, sampleFormat: .int24).validate(channels: 9, sampleRate: 48000))
        XCTAssertThrowsError(try RecordingFormat(container: .flac, sampleFormat: .float32).validate(channels: 2, sampleRate: 48000))
        XCTAssertThrowsError(try RecordingFormat(container: .wav, sampleFormat: .int16).validate(channels: 2000, sampleRate: 48000))
    }

    func testPerChannelAndPartPaths() {
        XCTAssertEqual(RecordingFiles.paths(basePath: "/r/take.wav", part: 1, channels: 2, perChannel: false), ["/r/take.wav"])
        XCTAssertEqual(RecordingFiles.paths(basePath: "/r/take.wav", part: 2, channels: 2, perChannel: false),
                       ["/r/take-part2.wav"])
        XCTAssertEqual(RecordingFiles.paths(basePath: "/r/take.wav", part: 1, channels: 2, perChannel: true),
                       ["/r/take_1.wav", "/r/take_2.wav"])
        XCTAssertEqual(RecordingLog.path(for: "/r/take.wav"), "/r/take.log")
    }
}
