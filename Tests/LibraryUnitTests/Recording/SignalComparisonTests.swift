import JackTestSupport
import Measurement
import XCTest

/// How `SentSignal.compare` sorts a channel-period, on takes made up here in
/// the shapes jackd's `-L` loopback produced (RecordBitExactTests): the
/// race between the loopback's copy and the sender's write, turned into fixed data.
final class SignalComparisonTests: XCTestCase {
    let sent = SentSignal(signal: TestSignal(seed: 1040), onTwentyFourBitGrid: false)
    let period = 64
    let first: UInt32 = 100_000

    /// One channel, four periods; period 2 made of `runs` (cycles back, frames).
    func take(_ runs: [(cycles: Int, frames: Int)]) -> [Float] {
        var samples = (0..<(4 * period)).map { sent.sample(channel: 0, frame: first &+ UInt32($0) &- UInt32(period), onset: 0) }
        var frame = 2 * period
        for run in runs {
            for _ in 0..<run.frames {
                samples[frame] = sent.sample(channel: 0, frame: first &+ UInt32(frame) &- UInt32(run.cycles * period), onset: 0)
                frame += 1
            }
        }
        return samples
    }

    func compare(_ samples: [Float]) -> SentSignal.Comparison {
        sent.compare(samples, channels: 1, firstFrameTime: first, period: period)
    }

    func testEveryShapeOfTheCopyRaceIsTornAndNothingElse() {
        for shape in [[(0, 20), (1, 44)], [(1, 3), (0, 61)], [(1, 1), (0, 30), (1, 33)], [(0, 64)], [(1, 64)]] {
            let result = compare(take(shape.map { (cycles: $0.0, frames: $0.1) }))
            let torn = shape.count > 1 ? 1 : 0
            XCTAssertEqual(result.torn, torn, "\(shape)")
            XCTAssertEqual(result.previousCycle, 4 - (shape.count > 1 || shape[0].0 == 0 ? 1 : 0), "\(shape)")
            XCTAssertEqual(result.mismatched, 0, "\(shape): \(result.firstMismatch ?? "")")
        }
    }

    func testOneWrongSampleIsAMismatchThatSaysWhatTheFramesWere() {
        var samples = take([(1, 3), (0, 61)])
        samples[2 * period + 40] = samples[2 * period + 40].nextUp
        let result = compare(samples)
        XCTAssertEqual(result.mismatched, 1)
        XCTAssertEqual(result.torn, 0)
        XCTAssertTrue(result.firstMismatch?.hasSuffix("its frames: 0..<3 cycle before, 3..<40 same cycle, 40..<41 none, "
                                                      + "41..<64 same cycle") ?? false, result.firstMismatch ?? "")
    }
}
