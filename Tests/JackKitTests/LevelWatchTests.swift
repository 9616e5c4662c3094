@testable import JackRuntime
import JackTestSupport
import XCTest

/// The output stage's level watch decides, every cycle of a session that is
/// not in measurement mode, whether the outputs carried sound (above −80
/// dBFS): the `sounding` flag other sessions and `jas sessions` read. The
/// scan compares eight samples at a time and the rest one by one, so these
/// check it against the plain definition on lengths the two loops split
/// differently, without a server. (Found by them: a NaN or infinity among
/// the last samples of a period not a multiple of 8 was taken for silence.)
final class LevelWatchTests: XCTestCase {
    let threshold = OutputStageState.audibleThreshold

    /// Buffers of `channels` × `frames` samples, all `fill`, handed to `body` as the stage sees them.
    func withOutputs<T>(channels: Int, frames: Int, fill: Float = 0,
                        _ body: (UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>) -> T) -> T {
        let samples = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, channels * frames))
        samples.initialize(repeating: fill)
        let outputs = UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        for channel in 0..<channels { outputs[channel] = samples.baseAddress! + channel * frames }
        defer { samples.deallocate(); outputs.deallocate() }
        return body(outputs)
    }

    func testOneSampleAboveTheThresholdAnywhereIsSound() {
        for frames in [1, 7, 8, 9, 31, 32, 33, 64, 127, 128, 129, 255, 256, 1000, 4096] {
            for channels in [1, 2, 3, 16] {
                withOutputs(channels: channels, frames: frames) { outputs in
                    XCTAssertFalse(OutputStageState.isAudible(outputs, frames: frames), "\(channels) × \(frames) of silence")
                    for (channel, frame) in [(0, 0), (channels - 1, frames - 1), (channels / 2, frames / 2)] {
                        for value in [threshold.nextUp, -threshold.nextUp, 1, -1, .infinity, -.infinity, .nan] {
                            outputs[channel][frame] = value
                            XCTAssertTrue(OutputStageState.isAudible(outputs, frames: frames),
                                          "\(value) at channel \(channel), frame \(frame) of \(channels) × \(frames)")
                            outputs[channel][frame] = 0
                        }
                    }
                }
            }
        }
    }

    func testSamplesAtOrBelowTheThresholdAreSilence() {
        for frames in [1, 8, 33, 128, 129] {
            for value in [threshold, -threshold, threshold.nextDown, -0.0, .leastNonzeroMagnitude, -.leastNormalMagnitude] {
                withOutputs(channels: 3, frames: frames, fill: value) { outputs in
                    XCTAssertFalse(OutputStageState.isAudible(outputs, frames: frames), "every sample \(value), \(frames) frames")
                }
            }
        }
    }

    /// Only the first `frames` samples count: a louder sample after them is not this cycle's.
    func testSamplesPastTheCycleAreNotRead() {
        withOutputs(channels: 2, frames: 64) { outputs in
            outputs[0][40] = 0.5
            outputs[1][63] = 0.5
            XCTAssertFalse(OutputStageState.isAudible(outputs, frames: 40))
            XCTAssertTrue(OutputStageState.isAudible(outputs, frames: 41))
        }
    }

    /// Noise at random levels around the threshold, against the definition.
    func testRandomCyclesAgreeWithTheDefinition() {
        var generator = SeededGenerator(state: 38)
        for _ in 0..<2000 {
            let channels = Int.random(in: 1...8, using: &generator), frames = Int.random(in: 1...300, using: &generator)
            let scale = threshold * Float.random(in: 0.5...1.02, using: &generator)
            withOutputs(channels: channels, frames: frames) { outputs in
                var expected = false
                for channel in 0..<channels {
                    for frame in 0..<frames {
                        let sample = scale * Float.random(in: -1...1, using: &generator)
                        outputs[channel][frame] = sample
                        expected = expected || abs(sample) > threshold
                    }
                }
                XCTAssertEqual(OutputStageState.isAudible(outputs, frames: frames), expected, "\(channels) × \(frames)")
            }
        }
    }
}
