import Foundation
@testable import Measurement
import XCTest

/// The sweep's analysis on blocks made in closed form: a delayed copy is
/// flat with that delay, and a polynomial's harmonics, separated by their
/// advance, are its closed-form levels.
final class SweepAnalysisTests: XCTestCase {
    func testAPolynomialsHarmonicsFromTheSweepAreTheClosedForms() {
        let sweep = SweepStimulus(seconds: 2, levelDBFS: -6, sampleRate: 48000)
        let played = sweep.samples()
        let (a2, a3, delay) = (0.02, 0.005, 300)
        let recorded = [Float](repeating: 0, count: delay) + played.dropLast(delay).map { sample -> Float in
            let v = Double(sample)
            return Float(v + a2 * v * v + a3 * v * v * v)
        }
        let analysis = SweepAnalysis.analyse(played: played, recorded: recorded, sweep: sweep)
        XCTAssertEqual(analysis.delayFrames, delay)
        let amplitude = pow(10, -6.0 / 20)
        let fundamental = amplitude + 0.75 * a3 * pow(amplitude, 3)
        let second = 20 * log10(a2 * amplitude * amplitude / 2 / fundamental)
        let third = 20 * log10(a3 * pow(amplitude, 3) / 4 / fundamental)
        // Under five times the sweep's start, no distortion is told.
        XCTAssertNil(analysis.distortion(at: 60))
        for frequency in [100.0, 200.0, 400.0, 1000.0, 3000.0, 6000.0] {
            guard let distortion = analysis.distortion(at: frequency) else {
                XCTFail("no distortion at \(frequency) Hz")
                continue
            }
            XCTAssertEqual(distortion.harmonics[2] ?? 0, second, accuracy: 0.2, "H2 at \(frequency) Hz")
            XCTAssertEqual(distortion.harmonics[3] ?? 0, third, accuracy: 0.2, "H3 at \(frequency) Hz")
            // No 4th order in the polynomial: far below (where the 4th harmonic is still in the band).
            if let fourth = distortion.harmonics[4] { XCTAssertLessThan(fourth, third - 40, "H4 at \(frequency) Hz") }
            XCTAssertEqual(distortion.thdDB ?? 0, 10 * log10(pow(10, second / 10) + pow(10, third / 10)), accuracy: 0.2)
            XCTAssertLessThan(distortion.floorDB, third - 20, "the method's floor at \(frequency) Hz")
        }
        // The linear response: the fundamental's gain.
        XCTAssertEqual(analysis.points(at: [1000]).first?.magnitudeDB ?? 0, 20 * log10(fundamental / amplitude), accuracy: 0.05)
    }

    /// A perfect path: no harmonic is told at any frequency, however short the sweep: what the method
    /// itself leaves in the windows is its floor, said as such, never a THD.
    func testAPerfectPathHasNoHarmonicsOnlyTheMethodsFloor() {
        for seconds in [1.0, 5.0] {
            let sweep = SweepStimulus(seconds: seconds, levelDBFS: -6, sampleRate: 48000)
            let played = sweep.samples()
            let analysis = SweepAnalysis.analyse(played: played, recorded: [Float](repeating: 0, count: 256) + played.dropLast(256),
                                                 sweep: sweep)
            for frequency in SweepAnalysis.logFrequencies(from: 100, to: 10_000, perOctave: 3) {
                let distortion = analysis.distortion(at: frequency)
                XCTAssertNotNil(distortion, "\(frequency) Hz")
                XCTAssertNil(distortion?.thdDB, "\(seconds) s at \(frequency) Hz: \(String(describing: distortion))")
                XCTAssertLessThan(distortion?.floorDB ?? 0, -80, "\(seconds) s at \(frequency) Hz")
            }
        }
    }
}

/// Fractional-octave smoothing for display: the power of the bins within
/// the fraction averaged, the raw bins untouched.
final class ResponseSmoothingTests: XCTestCase {
    /// A response on 1 Hz bins from 20 Hz whose bin power is `power(frequency)`.
    private func response(_ power: (Double) -> Double) -> SweepAnalysis {
        let bins = (20...20_000).map { bin in (re: power(Double(bin)).squareRoot(), im: 0.0) }
        return SweepAnalysis(sampleRate: 48000, band: 20...20_000, delayFrames: 0, firstFrequency: 20, binWidth: 1,
                             response: bins, impulseResponse: [], harmonicResponses: [:], floorResponses: [:])
    }

    /// Bins alternating between twice and none of the power read as 0 dB
    /// once smoothed (their mean), and -inf or +3 dB raw.
    func testAlternatingBinsSmoothToTheirMeanPower() {
        let comb = response { $0.truncatingRemainder(dividingBy: 2) == 0 ? 2 : 0 }
        for point in comb.smoothed(at: [200, 1000, 5000], octaveFraction: 3) {
            XCTAssertEqual(point.magnitudeDB, 0, accuracy: 0.05, "\(point.frequency) Hz")
        }
        XCTAssertEqual(comb.points(at: [1000]).first?.magnitudeDB ?? 0, 10 * log10(2), accuracy: 1e-9, "the raw bins stay")
    }

    /// One missing bin at 1 kHz in a flat response: the notch is as deep as
    /// one bin of the fraction's bins, so shallower the wider the fraction.
    func testANotchIsAsDeepAsItsShareOfTheFraction() {
        let notched = response { $0 == 1000 ? 0 : 1 }
        for fraction in [3, 6, 12, 24, 48] {
            let halfWidth = pow(2, 1 / (2 * Double(fraction)))
            let bins = Double(Int((1000 * halfWidth).rounded(.down)) - Int((1000 / halfWidth).rounded(.up)) + 1)
            let point = notched.smoothed(at: [1000], octaveFraction: fraction)[0]
            XCTAssertEqual(point.magnitudeDB, 10 * log10((bins - 1) / bins), accuracy: 1e-9, "1/\(fraction) octave: \(bins) bins")
        }
        XCTAssertEqual(notched.smoothed(at: [3000], octaveFraction: 3)[0].magnitudeDB, 0, accuracy: 1e-12)
        XCTAssertEqual(notched.points(at: [1000]).first?.magnitudeDB, -.infinity)
    }
}
