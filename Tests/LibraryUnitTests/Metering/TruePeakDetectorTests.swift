import JackTestSupport
import Metering
import XCTest

/// A file's highest true peak, found while skipping what cannot pass the
/// peak so far, against every chunk's peaks taken in full.
final class TruePeakDetectorTests: XCTestCase {
    /// Every channel's peak of every chunk, in full, and the highest-peak
    /// shortcut, over the same chunks of `samples`.
    private func highest(_ samples: [Float], channels: Int, rate: Int, chunks: [Int]) -> (full: Double, skipping: Double) {
        var full = TruePeakDetector(channels: channels, sampleRate: rate, joinsMidStream: true)
        var skipping = TruePeakDetector(channels: channels, sampleRate: rate, joinsMidStream: true)
        var (fullPeak, skippingPeak) = (0.0, 0.0)
        var offset = 0, index = 0
        let frames = samples.count / channels
        while offset < frames {
            let take = min(chunks[index % chunks.count], frames - offset)
            // Each chunk in a buffer of its own, as a recorder's writes come.
            let chunk = Array(samples[(offset * channels)..<((offset + take) * channels)])
            chunk.withUnsafeBufferPointer { buffer in
                fullPeak = max(fullPeak, full.peaks(buffer.baseAddress!, frames: take).max() ?? 0)
                skippingPeak = max(skippingPeak, skipping.highestPeak(buffer.baseAddress!, frames: take, above: skippingPeak))
            }
            offset += take
            index += 1
        }
        return (fullPeak, skippingPeak)
    }

    func testAPeakBetweenSamplesBelowTheLoudestSampleSoFarIsFound() {
        // A slow sine reaching 0.8 on its samples, then a tone at a quarter of
        // the rate whose samples fall at ±0.672 while its waveform reaches
        // 0.95 between them: its samples are all under the peak so far.
        let rate = 48000
        var samples: [Float] = []
        for frame in 0..<9600 { samples.append(0.8 * Float(sin(2 * Double.pi * 50 * Double(frame) / Double(rate)))) }
        for frame in 0..<4800 { samples.append(0.95 * Float(sin(Double.pi / 2 * Double(frame) + .pi / 4))) }
        for frame in 0..<4800 { samples.append(0.1 * Float(sin(2 * Double.pi * 440 * Double(frame) / Double(rate)))) }
        let (full, skipping) = highest(samples, channels: 1, rate: rate, chunks: [256])
        XCTAssertEqual(skipping, full, "the same highest peak")
        // The tone's peak between its samples (and its onset's overshoot), above every sample.
        XCTAssertEqual(full, 0.95, accuracy: 0.02, "the tone's peak between its samples")
        XCTAssertGreaterThan(full, Double(samples.map(abs).max() ?? 0) + 0.1)
    }

    func testAProgrammeOfChangingLevelsHasTheSameHighestPeakInAnyChunks() {
        // Noise whose level changes every 100 ms, with quarter-rate bursts,
        // at 44.1 kHz (4× oversampling) on eight channels and at 96 kHz (2×)
        // on eleven (the scan takes eight at a time, then the rest one by one).
        var generator = SeededGenerator(state: 7)
        for (rate, channels) in [(44100, 8), (96000, 11)] {
            var samples: [Float] = []
            var level: Float = 0.1
            var burst = false
            for frame in 0..<(rate * 3) {
                if frame % (rate / 10) == 0 {
                    level = Float.random(in: 0.01...0.9, using: &generator)
                    burst = Float.random(in: 0..<1, using: &generator) < 0.2
                }
                for channel in 0..<channels {
                    samples.append(burst
                        ? level * Float(sin(Double.pi / 2 * Double(frame) + Double(channel) * 0.3))
                        : level * Float.random(in: -1...1, using: &generator))
                }
            }
            let (full, skipping) = highest(samples, channels: channels, rate: rate, chunks: [256, 5, 1000, 3, 64, 4800, 333, 11])
            XCTAssertEqual(skipping, full, "\(rate) Hz: the same highest peak")
            XCTAssertGreaterThan(full, 0.5, "\(rate) Hz")
        }
    }

    func testABurstRightAfterSkippedChunksIsInterpolatedWithTheSamplesBeforeIt() {
        // A quiet tone (different on each channel) with a burst of four
        // samples every 10 ms, each half as loud again as the one before,
        // cut so that each burst begins a chunk after two chunks of five
        // frames: each burst's true peak, a new highest one, is interpolated
        // with samples of chunks that were not (the filter reaches 12 back).
        // On both channels of two, and on one channel of ten, among the eight
        // the scan takes together.
        for (channels, bursting) in [(2, 0..<2), (10, 5..<6)] {
            let rate = 48000
            var samples: [Float] = []
            var level: Float = 0.1
            for block in 0..<6 {
                for frame in 0..<480 {
                    for channel in 0..<channels {
                        let tone = Float(sin(Double.pi / 2 * Double(block * 480 + frame) + .pi / 4 + Double(channel)))
                        let bursts = frame < 4 && bursting.contains(channel)
                        samples.append((bursts ? level : 0.05 - 0.02 * Float(channel % 2)) * tone)
                    }
                }
                level *= 1.5
            }
            let (full, skipping) = highest(samples, channels: channels, rate: rate, chunks: [240, 230, 5, 5])
            XCTAssertEqual(skipping, full, "\(channels) channels: the same highest peak")
            XCTAssertGreaterThan(full, Double(level / 1.5) * 0.75, "\(channels) channels: the last burst")
        }
    }
}
