import Foundation
@testable import Measurement
import XCTest

/// ITU-R BS.468-4's quasi-peak detector against the Recommendation's own
/// acceptance windows (clause 2, Tables 2 and 3: the reading of 5 kHz
/// bursts as a percentage of the same tone's steady reading), at three
/// sample rates; and its level scale (a steady 1 kHz sine reads its dBFS).
final class QuasiPeakMeterTests: XCTestCase {
    /// Table 2, single 5 kHz bursts: duration (ms), lowest and highest reading (%).
    private let singleBursts: [(ms: Double, lower: Double, upper: Double)] = [
        (1, 13.5, 21.4), (2, 22.4, 31.6), (5, 34, 46), (10, 41, 55), (20, 44, 60), (50, 50, 68), (100, 58, 78), (200, 68, 92),
    ]
    /// Table 3, 5 ms bursts of 5 kHz repeated: bursts a second, lowest and highest reading (%).
    private let burstTrains: [(perSecond: Int, lower: Double, upper: Double)] = [(2, 43, 53), (10, 72, 82), (100, 94, 100)]

    private func tone(_ rate: Int, count: Int, on: (Int) -> Bool) -> [Double] {
        (0..<count).map { on($0) ? sin(2 * Double.pi * 5000 * Double($0) / Double(rate)) : 0 }
    }

    func testEveryBurstReadsWithinTheRecommendationsWindows() {
        for rate in [44100, 48000, 96000] {
            let meter = QuasiPeakMeter(sampleRate: rate)
            let steady = meter.steadyReading(frequency: 5000)
            for burst in singleBursts {
                let frames = Int((burst.ms / 1000 * Double(rate)).rounded())
                let reading = (meter.trace(tone(rate, count: frames + 2 * rate) { $0 < frames }).max() ?? 0) / steady * 100
                XCTAssertGreaterThanOrEqual(reading, burst.lower, "\(burst.ms) ms at \(rate) Hz")
                XCTAssertLessThanOrEqual(reading, burst.upper, "\(burst.ms) ms at \(rate) Hz")
            }
            for train in burstTrains {
                let period = rate / train.perSecond, on = Int(0.005 * Double(rate))
                let readings = meter.trace(tone(rate, count: 4 * rate) { $0 % period < on })
                let reading = (readings[(3 * rate)...].max() ?? 0) / steady * 100
                XCTAssertGreaterThanOrEqual(reading, train.lower, "\(train.perSecond)/s at \(rate) Hz")
                XCTAssertLessThanOrEqual(reading, train.upper, "\(train.perSecond)/s at \(rate) Hz")
            }
        }
    }

    /// A steady 1 kHz sine reads its own level (the 468 curve is 0 dB there);
    /// digital silence reads −∞, never a made-up floor.
    func testASteadyKilohertzSineReadsItsLevel() {
        let meter = QuasiPeakMeter(sampleRate: 48000)
        let block = SineStimulus(frequency: 1000, levelDBFS: -20, sampleRate: 48000).samples(count: 48000)
        XCTAssertEqual(meter.weightedNoiseDBFS(block[...], fft: RealFFT(length: 48000)), -20, accuracy: 0.01)
        XCTAssertEqual(meter.weightedNoiseDBFS([Float](repeating: 0, count: 48000)[...], fft: RealFFT(length: 48000)), -.infinity)
        // At 6.3 kHz the curve is +12.2 dB (Table 1), and the reading follows it.
        let high = SineStimulus(frequency: 6300, levelDBFS: -30, sampleRate: 48000).samples(count: 48000)
        XCTAssertEqual(meter.weightedNoiseDBFS(high[...], fft: RealFFT(length: 48000)), -30 + 12.2, accuracy: 0.1)
    }
}
