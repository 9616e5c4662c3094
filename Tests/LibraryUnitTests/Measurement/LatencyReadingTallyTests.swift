@testable import Measurement
import XCTest

/// When `jas latency --count N` (or any tool's run of readings) stops, decided without a server.
final class LatencyReadingTallyTests: XCTestCase {
    func reading(_ index: Int, valid: Bool, problem: LatencyProblem? = nil) -> LatencyReading {
        LatencyReading(index: index, valid: valid, problem: problem, measuredFrames: valid ? 256 : nil,
                       measuredMs: valid ? 256 / 48 : nil, reportedFrames: nil, reportedCaptureFrames: nil,
                       reportedPlaybackFrames: nil, reportedProblem: .unknown, reportedSettled: true, excessFrames: nil,
                       inverted: false, weakestToneDBFS: -6, toneSpreadFrames: 0, sampleRate: 48000, periodFrames: 256,
                       windowStartFrame: 0)
    }

    func testARunEndsWhenTheValidReadingsCame() {
        var tally = LatencyReadingTally(wanted: 3)
        for index in 1...3 {
            XCTAssertTrue(tally.wantsMore)
            tally.count(reading(index, valid: index != 2))
        }
        XCTAssertTrue(tally.wantsMore, "two of three valid")
        tally.count(reading(4, valid: true))
        XCTAssertFalse(tally.wantsMore)
        XCTAssertNil(tally.shortfall)
        XCTAssertEqual(tally.valid.map(\.index), [1, 3, 4])
    }

    func testItGivesUpAfterTwiceTheWantedPlusEightReadingsWithoutANumber() {
        var tally = LatencyReadingTally(wanted: 5)
        var index = 0
        while tally.wantsMore {
            index += 1
            tally.count(reading(index, valid: false, problem: .signalTooWeak))
        }
        XCTAssertEqual(index, 2 * 5 + 8)
        XCTAssertEqual(tally.shortfall, "0 valid reading(s) of 5 wanted after 18 reading(s)")
    }

    func testXrunsDoNotCountAgainstTheSignalButSixtyOfThemEndTheRun() {
        var tally = LatencyReadingTally(wanted: 1)
        for index in 1...59 { tally.count(reading(index, valid: false, problem: .xrun)) }
        XCTAssertTrue(tally.wantsMore, "a loaded server spoils readings; the signal is not to blame")
        tally.count(reading(60, valid: false, problem: .xrun))
        XCTAssertFalse(tally.wantsMore)
        XCTAssertEqual(tally.shortfall, "0 valid reading(s) of 1 wanted after 60 reading(s), 60 of them spoilt by xruns "
                           + "the server reported")
    }

    func testWithoutACountItNeverEnds() {
        var tally = LatencyReadingTally(wanted: nil)
        for index in 1...500 { tally.count(reading(index, valid: false, problem: .xrun)) }
        XCTAssertTrue(tally.wantsMore)
        XCTAssertNil(tally.shortfall)
    }
}
