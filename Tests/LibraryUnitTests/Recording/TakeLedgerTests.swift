@testable import Recording
import XCTest

/// The take's account on its own, without a disk or a server.
final class TakeLedgerTests: XCTestCase {
    func testTheLimitEndsTheTakeOnceAndCutsWhatComesAfter() {
        let ledger = TakeLedger(channels: 1, limitFrames: 1_000)
        ledger.started(firstFrameTime: 0, prerollFrames: 0)
        XCTAssertFalse(ledger.countWritten(600, peaks: [0.5], endingAt: 0))
        XCTAssertEqual(ledger.allowedFrames(600), 400)
        XCTAssertTrue(ledger.countWritten(400, peaks: [0.25], endingAt: 600), "the limit reached")
        XCTAssertTrue(ledger.isFinished)
        XCTAssertFalse(ledger.isRecording)
        XCTAssertEqual(ledger.allowedFrames(256), 0)
        XCTAssertFalse(ledger.finish(), "ended already")
        XCTAssertEqual(ledger.takePeaks(), [0.5])
        XCTAssertEqual(ledger.takePeaks(), [0], "read once")
    }

    func testFramesNotWrittenCountTowardsTheLimit() {
        let ledger = TakeLedger(channels: 2, limitFrames: 1_000)
        XCTAssertFalse(ledger.countWritten(900, peaks: [0, 0], endingAt: nil))
        XCTAssertFalse(ledger.countUnwritten(0))
        XCTAssertTrue(ledger.countUnwritten(100))
        XCTAssertEqual(ledger.snapshot.unwrittenFrames, 100)
        XCTAssertEqual(ledger.snapshot.timelineFrames, 1_000)
    }

    func testFramesWrittenBeforeAFailureDoNotEndTheTake() {
        let ledger = TakeLedger(channels: 1, limitFrames: 1_000)
        ledger.countWrittenBeforeFailure(1_000)
        XCTAssertFalse(ledger.isFinished, "the failure ends it, or the frames after it are counted unwritten")
        XCTAssertEqual(ledger.failed("disk on fire"), 1_000)
        XCTAssertEqual(ledger.snapshot.problem, "disk on fire")
        XCTAssertTrue(ledger.isFinished)
    }

    func testXrunsCountOnlyWhileTheTakeRecords() {
        let ledger = TakeLedger(channels: 1, limitFrames: nil)
        XCTAssertFalse(ledger.countXruns(2), "armed")
        ledger.started(firstFrameTime: 0, prerollFrames: 0)
        XCTAssertTrue(ledger.countXruns(3))
        XCTAssertTrue(ledger.finish())
        XCTAssertFalse(ledger.countXruns(1), "ended")
        XCTAssertEqual(ledger.snapshot.xruns, 3)
    }

    func testAFrameTimeFallsWhereTheLastFramesWrittenPutIt() {
        let ledger = TakeLedger(channels: 1, limitFrames: nil)
        XCTAssertEqual(ledger.position(ofFrameTime: 123), 0, "nothing written yet")
        ledger.started(firstFrameTime: 5_000, prerollFrames: 0)
        _ = ledger.countWritten(256, peaks: [0], endingAt: 5_000)
        XCTAssertEqual(ledger.position(ofFrameTime: 5_300), 300)
        XCTAssertEqual(ledger.position(ofFrameTime: 4_000), 0, "before the take")
        XCTAssertTrue(ledger.hasWritten(past: 5_255))
        XCTAssertFalse(ledger.hasWritten(past: 5_256))
        // A gap of 1000 frames resumes at 9000: the anchor moves past its silence.
        _ = ledger.countGap(at: 256, frames: 1_000, written: 1_000, kind: .other, resumedAt: 9_000)
        XCTAssertEqual(ledger.position(ofFrameTime: 9_010), 1_266)
        XCTAssertEqual(ledger.snapshot.gaps, 1)
        XCTAssertEqual(ledger.snapshot.gapFrames, 1_000)
    }

    func testEachKindOfGapHasItsOwnCounter() {
        let ledger = TakeLedger(channels: 1, limitFrames: nil)
        _ = ledger.countGap(at: 0, frames: 10, written: 10, kind: .overrun, resumedAt: nil)
        _ = ledger.countGap(at: 10, frames: 20, written: 20, kind: .interruption, resumedAt: nil)
        _ = ledger.countGap(at: 30, frames: 40, written: 40, kind: .clockStandStill, resumedAt: nil)
        ledger.countOutage(frames: 50)
        let stats = ledger.snapshot
        XCTAssertEqual([stats.overruns, stats.interruptions, stats.gaps], [1, 1, 4])
        XCTAssertEqual([stats.overrunFrames, stats.interruptionFrames, stats.gapFrames, stats.framesWritten], [10, 20, 120, 70])
        XCTAssertEqual(stats.lastClockGap, 30..<70)
    }

    func testSourcesAwayWhileTheClockStoodStillAreAGapFromWhereItsSilenceEnds() {
        let ledger = TakeLedger(channels: 1, limitFrames: nil)
        _ = ledger.countWritten(1_000, peaks: [0], endingAt: nil)
        _ = ledger.countGap(at: 1_000, frames: 500, written: 500, kind: .clockStandStill, resumedAt: nil)
        let gap = ledger.noteSourceGap(from: 900, to: 1_600)
        XCTAssertEqual(gap.at, 1_500)
        XCTAssertEqual(gap.frames, 100)
        let elsewhere = ledger.noteSourceGap(from: 2_000, to: 2_300)
        XCTAssertEqual(elsewhere.at, 2_000, "a stand-still outside it moves nothing")
        XCTAssertEqual(elsewhere.frames, 300)
        XCTAssertEqual(ledger.snapshot.gaps, 3)
        XCTAssertEqual(ledger.gaps(inSetFrom: 0, to: 3_000).map(\.atFrame), [1_500, 2_000])
    }

    func testAGapAcrossTwoSetsIsListedInEachForItsPart() {
        let ledger = TakeLedger(channels: 1, limitFrames: nil)
        ledger.noteGap(at: 900, frames: 200, reason: "stall")
        XCTAssertEqual(ledger.gaps(inSetFrom: 0, to: 1_000),
                       [ManifestLine.Gap(atFrame: 900, frames: 100, reason: "stall", written: true)])
        XCTAssertEqual(ledger.gaps(inSetFrom: 1_000, to: 2_000),
                       [ManifestLine.Gap(atFrame: 0, frames: 100, reason: "stall", written: true)])
        XCTAssertEqual(ledger.gaps(inSetFrom: 2_000, to: 3_000), [], "let go once its last set is listed")
    }
}
