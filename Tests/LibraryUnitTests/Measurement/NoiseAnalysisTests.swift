import Foundation
import JackTestSupport
@testable import Measurement
import XCTest

/// The weightings against the standards' own tables, and the noise
/// analysis against closed forms and against scipy on the same samples.
final class NoiseAnalysisTests: XCTestCase {
    // IEC 61672-1 Table 3: A and C at the nominal frequencies 10 Hz to 20 kHz, whose exact values are
    // 1000 · 10^(n/10) Hz, n = -20...13 (the table is rounded to 0.1 dB).
    private let iecA = [-70.4, -63.4, -56.7, -50.5, -44.7, -39.4, -34.6, -30.2, -26.2, -22.5, -19.1, -16.1, -13.4, -10.9,
                        -8.6, -6.6, -4.8, -3.2, -1.9, -0.8, 0, 0.6, 1.0, 1.2, 1.3, 1.2, 1.0, 0.5, -0.1, -1.1, -2.5, -4.3, -6.6, -9.3]
    private let iecC = [-14.3, -11.2, -8.5, -6.2, -4.4, -3.0, -2.0, -1.3, -0.8, -0.5, -0.3, -0.2, -0.1, 0, 0, 0, 0, 0, 0, 0,
                        0, 0, -0.1, -0.2, -0.3, -0.5, -0.8, -1.3, -2.0, -3.0, -4.4, -6.2, -8.5, -11.2]
    // ITU-R BS.468's table of the weighting curve, Hz: dB.
    private let itu468: [(Double, Double)] = [
        (31.5, -29.9), (63, -23.9), (100, -19.8), (200, -13.8), (400, -7.8), (800, -1.9), (1000, 0), (2000, 5.6),
        (3150, 9.0), (4000, 10.5), (5000, 11.7), (6300, 12.2), (7100, 12.0), (8000, 11.4), (9000, 10.1), (10000, 8.1),
        (12500, 0), (14000, -5.3), (16000, -11.7), (20000, -22.2), (31500, -42.7)]

    func testAAndCWeightingsAreIEC61672sTable() {
        for (index, n) in (-20...13).enumerated() {
            let frequency = 1000 * pow(10, Double(n) / 10)
            XCTAssertEqual(Weighting.a.gainDB(at: frequency), iecA[index], accuracy: 0.051, "A at \(frequency) Hz")
            XCTAssertEqual(Weighting.c.gainDB(at: frequency), iecC[index], accuracy: 0.051, "C at \(frequency) Hz")
        }
        XCTAssertEqual(Weighting.unweighted.gainDB(at: 20), 0)
    }

    func testThe468CurveIsITURBS468sTableAndCCIRRMSIsItLess5Point63() {
        for (frequency, level) in itu468 {
            XCTAssertEqual(Weighting.itu468DB(at: frequency), level, accuracy: 0.1, "468 at \(frequency) Hz")
            XCTAssertEqual(Weighting.ccirRMS.gainDB(at: frequency), Weighting.itu468DB(at: frequency) - 5.63, accuracy: 1e-12)
        }
    }

    /// A coherent sine: unweighted, it is its level; weighted, its level
    /// plus the weighting's table value at its frequency (100 Hz is exact in
    /// both tables' series). A full-scale sine is 0 dBFS.
    func testACoherentSineReadsItsLevelPlusTheTablesWeighting() {
        let fft = RealFFT(length: 48000)
        for (frequency, level, a, c) in [(100.0, -20.0, -19.1, -0.3), (1000.0, 0.0, 0.0, 0.0)] {
            let stimulus = SineStimulus(frequency: frequency, levelDBFS: level, sampleRate: 48000)
            let noise = NoiseAnalysis.analyse(stimulus.samples(count: 48000)[...], sampleRate: 48000, fft: fft)
            XCTAssertEqual(noise.level(.unweighted), level, accuracy: 0.01, "\(frequency) Hz")
            XCTAssertEqual(noise.level(.a), level + a, accuracy: 0.06, "\(frequency) Hz")
            XCTAssertEqual(noise.level(.c), level + c, accuracy: 0.06, "\(frequency) Hz")
            // Its own bin left out, nothing is left: digital silence but for the float's rounding.
            let residual = NoiseAnalysis.analyse(stimulus.samples(count: 48000)[...], sampleRate: 48000,
                                                 excludedBins: [stimulus.bin], fft: fft)
            XCTAssertLessThan(residual.level(.unweighted), level - 130, "\(frequency) Hz")
        }
    }

    /// Dithered 16-bit noise: unweighted, the closed form (a quarter step
    /// squared, white, the band's share of the bins); unweighted, A and C
    /// within 0.01 dB of scipy on the same samples (scripts/noise-scipy.py).
    func testDitheredNoiseIsTheClosedFormAndScipyReadsItAlike() throws {
        var generator = SeededGenerator(state: 468)
        let step = 1.0 / 32768
        let block = (0..<48000).map { _ -> Float in
            let dither = Double.random(in: 0..<1, using: &generator) - Double.random(in: 0..<1, using: &generator)
            return Float((dither + 0.5).rounded(.down) * step)
        }
        let noise = NoiseAnalysis.analyse(block[...], sampleRate: 48000, fft: RealFFT(length: 48000))
        // 19,981 of the 24,000 bins lie in 20 Hz-20 kHz; a full-scale sine's mean square is 1/2.
        let theory = 10 * log10(step * step / 4 / 0.5 * 19981 / 24000)
        XCTAssertEqual(noise.level(.unweighted), theory, accuracy: 0.1)
        let reference = try scipyFigures("noise-scipy.py", [try write(block), "48000"])
        for weighting in [Weighting.unweighted, .a, .c] {
            XCTAssertEqual(noise.level(weighting), try XCTUnwrap(reference[weighting.rawValue]), accuracy: 0.01, "\(weighting)")
        }
    }

    private func write(_ block: [Float]) throws -> String {
        let path = NSTemporaryDirectory() + "noise-\(getpid()).f32"
        addTeardownBlock { unlink(path) }
        try block.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: path))
        return path
    }
}
