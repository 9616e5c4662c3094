import Capture
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
        // A frame clock that jumps while the wall clock says no period went by is no restart.
        var jumpy = CaptureTimeline(sampleRate: rate)
        _ = jumpy.step(cycle(900_000, seconds: 10))
        // ... and when it cost no wall-clock time either, nothing is missing: no zero-frame gap.
        XCTAssertEqual(jumpy.step(cycle(900_000 + 256 - 64, seconds: 10 + 256.0 / 48000)), .continuous)
        // A jump whose wall-clock time is part of a period is a gap of that time.
        var short = CaptureTimeline(sampleRate: rate)
        _ = short.step(cycle(900_000, seconds: 10))
        XCTAssertEqual(short.step(cycle(900_000 + 256 + 5000, seconds: 10 + 356.0 / 48000)), .gap(frames: 100, reason: .clockJump))
    }

    /// Seen with a loaded jackd -S (RecordRestartTests beside a busy core):
    /// two callbacks in a row read the same frame time, the second 580
    /// frames of wall clock after the first. Each brought its period; it was
    /// logged as a server restart, and 324 frames of silence were written.
    func testAFrameTimeReadTwiceIsNoGap() {
        var timeline = CaptureTimeline(sampleRate: rate)
        _ = timeline.step(cycle(56_320, seconds: 10))
        XCTAssertEqual(timeline.step(cycle(56_576, seconds: 10 + 580.0 / 48000)), .continuous)
        XCTAssertEqual(timeline.step(cycle(56_576, seconds: 10 + 1160.0 / 48000)), .continuous)
        XCTAssertEqual(timeline.step(cycle(56_832, seconds: 10 + 1416.0 / 48000)), .continuous)
        // Far behind, or long after, it is another server: the gap is the wall-clock time.
        XCTAssertEqual(timeline.step(cycle(56_832 - 4096, seconds: 10 + 2272.0 / 48000)), .gap(frames: 600, reason: .serverRestart))
        var later = CaptureTimeline(sampleRate: rate)
        _ = later.step(cycle(56_320, seconds: 10))
        XCTAssertEqual(later.step(cycle(56_320, seconds: 11 + 256.0 / 48000)), .gap(frames: 48000, reason: .serverRestart))
    }

    /// The steps and frame times of what `place` placed, for comparing.
    private func placed(_ timeline: inout CaptureTimeline, _ cycles: [CycleHeader]) -> [(UInt32, CaptureTimeline.Step)] {
        cycles.flatMap { timeline.place($0) }.map { ($0.cycle.frameTime, $0.step) }
    }

    /// A callback late past the next cycle reads that cycle's frame time, and
    /// the next callback reads it again: frame times 0, 512, 512, 768 for
    /// cycles at 0, 256, 512, 768. Step by step the first read is a gap of
    /// a period (silence written, the take a period late from there on);
    /// placed with the cycle after it, it is no gap and its frame time is 256.
    func testAFrameTimeReadAheadByALateCallbackIsNoGapOnceTheNextCycleIsSeen() {
        let reads = [cycle(56_320, seconds: 10), cycle(56_832, seconds: 10 + 520.0 / 48000),
                     cycle(56_832, seconds: 10 + 530.0 / 48000), cycle(57_088, seconds: 10 + 770.0 / 48000)]
        var pairwise = CaptureTimeline(sampleRate: rate)
        XCTAssertEqual(reads.map { pairwise.step($0) }.dropFirst(), [.gap(frames: 256, reason: .discontinuity), .continuous, .continuous],
                       "by two cycles alone the read ahead is a gap")
        var timeline = CaptureTimeline(sampleRate: rate)
        let result = placed(&timeline, reads)
        XCTAssertEqual(result.map(\.0), [56_320, 56_576, 56_832, 57_088])
        XCTAssertEqual(result.map(\.1), [.first, .continuous, .continuous, .continuous])
        // Two late callbacks in a row: both read ahead, the third reads again.
        var chain = CaptureTimeline(sampleRate: rate)
        let chained = placed(&chain, [cycle(56_064, seconds: 10), cycle(56_576, seconds: 10.011), cycle(56_832, seconds: 10.012),
                                      cycle(56_832, seconds: 10.013), cycle(57_088, seconds: 10.018)])
        XCTAssertEqual(chained.map(\.0), [56_064, 56_320, 56_576, 56_832, 57_088])
        XCTAssertEqual(chained.map(\.1), [.first, .continuous, .continuous, .continuous, .continuous])
        // A callback late past two cycles: three callbacks read one frame time.
        var twice = CaptureTimeline(sampleRate: rate)
        let farAhead = placed(&twice, [cycle(1000, seconds: 10), cycle(1768, seconds: 10.0107), cycle(1768, seconds: 10.0108),
                                       cycle(1768, seconds: 10.0109), cycle(2024, seconds: 10.0133)])
        XCTAssertEqual(farAhead.map(\.0), [1000, 1256, 1512, 1768, 2024])
        XCTAssertEqual(farAhead.map(\.1), [.first, .continuous, .continuous, .continuous, .continuous])
        // A read one period ahead after a real gap of two periods: two periods are missing.
        var both = CaptureTimeline(sampleRate: rate)
        let mixed = placed(&both, [cycle(1000, seconds: 10), cycle(2024, seconds: 10.021),
                                   cycle(2024, seconds: 10.022), cycle(2280, seconds: 10.026)])
        XCTAssertEqual(mixed.map(\.0), [1000, 1768, 2024, 2280])
        XCTAssertEqual(mixed.map(\.1), [.first, .gap(frames: 512, reason: .discontinuity), .continuous, .continuous])
    }

    /// A real gap: the cycles after it follow on, and it stands. The held
    /// cycles are placed as soon as one shows they were no read ahead, or at
    /// the hold limit, or when asked (the take ends).
    func testARealGapStandsAndItsCyclesArePlacedInOrder() {
        var timeline = CaptureTimeline(sampleRate: rate)
        XCTAssertEqual(timeline.place(cycle(1000, seconds: 10)).map(\.step), [.first])
        XCTAssertEqual(timeline.place(cycle(1000 + 256 * 3, seconds: 10.016)), [], "held: the next cycle may show a read ahead")
        var later: [CaptureTimeline.Placed] = []
        for index in 4...(3 + CaptureTimeline.holdLimit) {
            let seconds = 10.016 + Double(index - 3) * 256 / 48000
            later += timeline.place(cycle(1000 + 256 * UInt32(index), seconds: seconds))
        }
        let limit = CaptureTimeline.holdLimit
        XCTAssertEqual(later.map(\.cycle.frameTime), (0...limit).map { 1768 + 256 * UInt32($0) })
        XCTAssertEqual(later.map(\.step), [.gap(frames: 512, reason: .discontinuity)] + Array(repeating: .continuous, count: limit))
        XCTAssertEqual(later.map(\.wasHeld), Array(repeating: true, count: limit) + [false])
        // Held until the take ends.
        let end = 1768 + 256 * UInt32(limit)
        XCTAssertEqual(timeline.place(cycle(end + 512, seconds: 10.09)), [])
        later = timeline.releaseHeld()
        XCTAssertEqual(later.map(\.step), [.gap(frames: 256, reason: .discontinuity)])
        XCTAssertEqual(timeline.releaseHeld(), [])
        // A new server or an overrun is no read ahead: placed at once, and the held ones before it.
        XCTAssertEqual(timeline.place(cycle(end + 1024, seconds: 10.1)), [])
        let restart = timeline.place(cycle(4096, seconds: 11, epoch: 1))
        XCTAssertEqual(restart.map(\.cycle.frameTime), [end + 1024, 4096])
        XCTAssertEqual(restart.map(\.wasHeld), [true, false])
    }

    func testAClockThatStoodStillIsAStallOfTheWallClockTime() {
        // A netjack2 slave whose master went away runs no cycles and its frame
        // clock does not move; when the master is back, cycles follow on by
        // frame time while 1.8 s went by.
        var timeline = CaptureTimeline(sampleRate: rate)
        _ = timeline.step(cycle(900_000, seconds: 10))
        XCTAssertEqual(timeline.step(cycle(900_256, seconds: 11.8 + 256.0 / 48000)), .gap(frames: 86400, reason: .stall))
        // Or with a period or two skipped on the way.
        _ = timeline.step(cycle(900_512, seconds: 11.8 + 512.0 / 48000))
        XCTAssertEqual(timeline.step(cycle(901_280, seconds: 13.8 + 768.0 / 48000)), .gap(frames: 96000, reason: .stall))
        // A callback that runs a little late is no stall: 0.2 s is within the bound of a quarter second.
        var late = CaptureTimeline(sampleRate: rate)
        _ = late.step(cycle(900_000, seconds: 10))
        XCTAssertEqual(late.step(cycle(900_256, seconds: 10.2 + 256.0 / 48000)), .continuous)
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

    func testPerChannelPartAndRotationPaths() {
        let date = 1_800_000_000.0
        let plain = TakeNaming(pattern: "/r/take.wav", rotates: false, channels: 2, perChannel: false, zone: .local)
        XCTAssertEqual(plain.paths(index: 1, utc: date), ["/r/take.wav"])
        XCTAssertEqual(plain.paths(index: 2, utc: date), ["/r/take-part2.wav"])
        XCTAssertEqual(plain.paths(index: 2, utc: date, attempt: 1), ["/r/take-part3.wav"], "a taken part is skipped")
        let split = TakeNaming(pattern: "/r/take.wav", rotates: false, channels: 2, perChannel: true, zone: .local)
        XCTAssertEqual(split.paths(index: 1, utc: date), ["/r/take_1.wav", "/r/take_2.wav"])
        let numbered = TakeNaming(pattern: "/r/take.wav", rotates: true, channels: 2, perChannel: false, zone: .local)
        XCTAssertEqual(numbered.paths(index: 1, utc: date), ["/r/take-001.wav"])
        XCTAssertEqual(numbered.paths(index: 12, utc: date, attempt: 1), ["/r/take-012-2.wav"])
        let timed = TakeNaming(pattern: "/r/take-%Y%m%d-%H%M%S.wav", rotates: true, channels: 2, perChannel: false, zone: .local)
        var seconds = time_t(1_800_000_000)
        var local = tm()
        localtime_r(&seconds, &local)
        let stamp = String(format: "%04d%02d%02d-%02d%02d%02d", local.tm_year + 1900, local.tm_mon + 1, local.tm_mday,
                           local.tm_hour, local.tm_min, local.tm_sec)
        XCTAssertEqual(timed.paths(index: 3, utc: date), ["/r/take-\(stamp).wav"])
        XCTAssertEqual(timed.paths(index: 3, utc: date, attempt: 2), ["/r/take-\(stamp)-3.wav"], "a taken name gets a counter")
        // A cut lies within half a frame of its boundary: named by the boundary, not the second before.
        let utcNamed = TakeNaming(pattern: "%H%M%S.wav", rotates: true, channels: 1, perChannel: false, zone: .utc)
        XCTAssertEqual(utcNamed.paths(index: 2, utc: 1_800_000_009.99999), ["080010.wav"])
        XCTAssertEqual(RecordingLog.path(for: "/r/take.wav"), "/r/take.log")
        // A take's manifest: in the pattern's fixed folder, named after the text before its first time field.
        XCTAssertEqual(TakeManifest.defaultPath(forPattern: "/srv/log/%Y-%m-%d/%H%M%S.wav"), "/srv/log/take.manifest.jsonl")
        XCTAssertEqual(TakeManifest.defaultPath(forPattern: "/srv/studio-%Y%m%d/%H%M.wav"), "/srv/studio.manifest.jsonl")
        XCTAssertEqual(TakeManifest.defaultPath(forPattern: "show-%Y%m%d-%H%M%S.wav"), "show.manifest.jsonl")
        XCTAssertEqual(TakeManifest.defaultPath(forPattern: "/r/show.wav"), "/r/show.manifest.jsonl")
    }
}
