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
