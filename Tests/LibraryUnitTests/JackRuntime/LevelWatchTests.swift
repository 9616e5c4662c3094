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

    // MARK: How often the stage looks

    /// Runs a stage watching as `watch` over `cycles` cycles of `frames`
    /// frames, as the processor's cycle does; `audible` says which cycles
    /// carry sound. The cycles whose sound was seen (`lastAudibleCycle` moved).
    func seenCycles(_ watch: LevelWatch, frames: Int, cycles: Int, audible: (Int) -> Bool) -> [Int] {
        withOutputs(channels: 2, frames: frames) { outputs in
            var stage = OutputStageState()
            stage.watchSpacing.store(watch.spacing, ordering: .relaxed)
            var seen: [Int] = []
            for cycle in 1...cycles {
                outputs[1][frames - 1] = audible(cycle) ? 0.5 : 0
                let before = stage.lastAudible.load(ordering: .relaxed)
                stage.process(outputs, frames: frames, cycle: UInt64(cycle))
                if stage.lastAudible.load(ordering: .relaxed) != before { seen.append(cycle) }
            }
            return seen
        }
    }

    /// Every cycle is looked at when watched exactly; none when off; one in
    /// spacing ÷ period when sampled (every cycle once a period is as long).
    func testASampledWatchLooksOnceInItsSpacing() {
        let always: (Int) -> Bool = { _ in true }
        XCTAssertEqual(seenCycles(.everyCycle, frames: 128, cycles: 20, audible: always), Array(1...20))
        XCTAssertEqual(seenCycles(.off, frames: 128, cycles: 20, audible: always), [])
        XCTAssertEqual(seenCycles(.sampled(frames: 1024), frames: 128, cycles: 40, audible: always), [8, 16, 24, 32, 40])
        XCTAssertEqual(seenCycles(.sampled(frames: 1024), frames: 1000, cycles: 8, audible: always), [2, 4, 6, 8])
        XCTAssertEqual(seenCycles(.sampled(frames: 1024), frames: 1024, cycles: 5, audible: always), Array(1...5))
        XCTAssertEqual(seenCycles(.sampled(frames: 1024), frames: 4096, cycles: 5, audible: always), Array(1...5))
        for watch in [LevelWatch.off, .everyCycle, .sampled(frames: 1024), .sampled(frames: 2)] {
            XCTAssertEqual(LevelWatch(spacing: watch.spacing), watch)
        }
    }

    /// What a sampled watch promises: a sound lasting its spacing plus a
    /// period is seen whenever it starts; one cycle's sound is not, unless it
    /// falls on a look. (An exact watch sees that cycle wherever it falls.)
    func testASampledWatchSeesEverySoundAsLongAsItsSpacingAndAPeriod() {
        let spacing = 1024
        for frames in [32, 64, 100, 128, 256, 1000, 1024, 2048] {
            let lasting = (spacing + frames + frames - 1) / frames
            for start in 1...20 {
                let sound = start..<(start + lasting)
                let seen = seenCycles(.sampled(frames: spacing), frames: frames, cycles: 80) { sound.contains($0) }
                XCTAssertFalse(seen.isEmpty, "\(lasting) cycles of \(frames) frames from cycle \(start) were not seen")
                XCTAssertTrue(seen.allSatisfy(sound.contains), "\(seen) outside \(sound)")
            }
        }
        var missed = 0
        for start in 1...16 {
            let sampled = seenCycles(.sampled(frames: spacing), frames: 128, cycles: 20) { $0 == start }
            if sampled.isEmpty { missed += 1 }
            XCTAssertEqual(seenCycles(.everyCycle, frames: 128, cycles: 20) { $0 == start }, [start])
        }
        XCTAssertEqual(missed, 14, "a one-cycle sound is seen only on the 2 looks of 16 cycles")
    }

    /// A muted stage writes silence and is not looked at; a ducked one is
    /// looked at after its gain (a sound ducked below the threshold is silence).
    func testMutedAndDuckedCyclesAreLookedAtAfterTheirGain() {
        withOutputs(channels: 1, frames: 64, fill: 0.5) { outputs in
            var stage = OutputStageState()
            stage.watchSpacing.store(LevelWatch.everyCycle.spacing, ordering: .relaxed)
            stage.muted.store(true, ordering: .relaxed)
            stage.process(outputs, frames: 64, cycle: 1)
            XCTAssertEqual(stage.lastAudible.load(ordering: .relaxed), 0)
            XCTAssertTrue((0..<64).allSatisfy { outputs[0][$0] == 0 })
            stage.muted.store(false, ordering: .relaxed)
            stage.currentGain = 0
            outputs[0].update(repeating: threshold, count: 64)
            stage.targetGainBits.store(Float(0).bitPattern, ordering: .relaxed)
            stage.process(outputs, frames: 64, cycle: 2)
            XCTAssertEqual(stage.lastAudible.load(ordering: .relaxed), 0, "silenced by the gain")
            stage.targetGainBits.store(Float(1).bitPattern, ordering: .relaxed)
            outputs[0].update(repeating: 0.5, count: 64)
            stage.process(outputs, frames: 64, cycle: 3)
            XCTAssertEqual(stage.lastAudible.load(ordering: .relaxed), 3)
        }
    }
}
