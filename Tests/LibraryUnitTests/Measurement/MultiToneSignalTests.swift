import Foundation
import JackTestSupport
import Measurement
import XCTest

/// The phase analysis on windows computed here from the signal's definition,
/// delayed by exactly known (fractional) amounts.
final class MultiToneSignalTests: XCTestCase {
    let signal = MultiToneSignal()
    let n = MultiToneSignal.windowFrames

    /// What arrives at frame times start… when the path delays by `delay`
    /// frames and multiplies by `gain`, plus `noise` (uniform, peak).
    func window(delay: Double, startFrame: UInt32, gain: Double = 1, noise: Double = 0) -> [Float] {
        var generator = SeededGenerator(state: 0x5EED)
        return (0..<n).map { index in
            let time = Double(Int(startFrame & UInt32(n - 1)) + index) - delay
            var sum = 0.0
            for (bin, phase) in zip(signal.bins, signal.phases) {
                sum += sin(2 * .pi * Double(bin) * time / Double(n) + phase)
            }
            let disturbance = noise == 0 ? 0 : Double.random(in: -noise...noise, using: &generator)
            return Float(gain * signal.toneAmplitude * sum + disturbance)
        }
    }

    func estimate(_ samples: [Float], startFrame: UInt32) -> MultiToneSignal.Estimate {
        samples.withUnsafeBufferPointer { signal.estimate(window: $0, startFrame: startFrame) }
    }

    func testTableIsTheSignalAtFrameTime() {
        let undelayed = window(delay: 0, startFrame: 5000)
        for index in stride(from: 0, to: n, by: 997) {
            XCTAssertEqual(signal.sample(at: UInt32(5000 + index)), undelayed[index], accuracy: 1e-6)
        }
        XCTAssertLessThan(signal.table.map { abs($0) }.max()!, 0.56, "the sum of tones must not clip")
    }

    func testReadsIntegerAndFractionalDelaysAcrossTheWholeRange() {
        for (delay, start) in [(0.0, UInt32(0)), (1, 77), (64, 4096), (256.25, 123_456), (1024.5, 9),
                               (3071.75, 65_536 * 3 + 17), (12_345.125, 1 << 31), (16_383, 700)] {
            let result = estimate(window(delay: delay, startFrame: start), startFrame: start)
            XCTAssertNil(result.problem, "delay \(delay)")
            XCTAssertEqual(result.delayFrames ?? -1, delay, accuracy: 1e-4, "delay \(delay) at frame \(start)")
            XCTAssertFalse(result.inverted)
            XCTAssertEqual(result.weakestToneDBFS, 20 * log10(signal.toneAmplitude), accuracy: 0.01)
        }
    }

    func testFrameTimeWrappingAroundIsSeamless() {
        let start = UInt32.max - 100
        let result = estimate(window(delay: 300.5, startFrame: start), startFrame: start)
        XCTAssertEqual(result.delayFrames ?? -1, 300.5, accuracy: 1e-4)
    }

    func testInversionIsSeenAndDoesNotMoveTheDelay() {
        for delay in [37.0, 512.3, 8000.9] {
            let result = estimate(window(delay: delay, startFrame: 999, gain: -1), startFrame: 999)
            XCTAssertTrue(result.inverted, "delay \(delay)")
            XCTAssertEqual(result.delayFrames ?? -1, delay, accuracy: 1e-4)
        }
    }

    func testAttenuatedPathStillReadsButSilenceDoesNot() {
        let quiet = estimate(window(delay: 100, startFrame: 0, gain: 0.03), startFrame: 0)
        XCTAssertEqual(quiet.delayFrames ?? -1, 100, accuracy: 1e-3)
        let silent = estimate([Float](repeating: 0, count: n), startFrame: 0)
        XCTAssertEqual(silent.problem, .signalTooWeak)
        XCTAssertNil(silent.delayFrames)
    }

    func testNoiseDominatedWindowGivesNoNumber() {
        // Tones clearly above the weak limit, but 2 % of the energy.
        let noisy = estimate(window(delay: 100, startFrame: 0, gain: 0.2, noise: 0.3), startFrame: 0)
        XCTAssertEqual(noisy.problem, .tooNoisy)
        XCTAssertNil(noisy.delayFrames)
    }

    func testAPeriodLostAsSilenceIsADropoutNotANumber() {
        // One period of 256 frames lost as silence on the way (PipeWire's
        // monitor loop does it without an xrun): the tones alone would still
        // read 1024.00001, so the silence itself is what spoils the window.
        var samples = window(delay: 1024, startFrame: 4096)
        for index in 9000..<9256 { samples[index] = 0 }
        let spoilt = estimate(samples, startFrame: 4096)
        XCTAssertEqual(spoilt.problem, .dropout)
        XCTAssertNil(spoilt.delayFrames)
        // Shorter than a dropout: a few zeros are a signal's own.
        var clean = window(delay: 1024, startFrame: 4096)
        for index in 9000..<9031 { clean[index] = 0 }
        XCTAssertNil(estimate(clean, startFrame: 4096).problem)
    }

    func testWindowOfTwoDifferentDelaysIsNotAveragedIntoANumber() {
        // The path jumps by 5.5 frames halfway through the window.
        var samples = window(delay: 200, startFrame: 0)
        let later = window(delay: 205.5, startFrame: 0)
        for index in n / 2..<n { samples[index] = later[index] }
        let result = estimate(samples, startFrame: 0)
        XCTAssertNil(result.delayFrames, "a changing path read as \(result.delayFrames ?? 0)")
        XCTAssertNotNil(result.problem)
    }
}
