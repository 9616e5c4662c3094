import Foundation
import JackTestSupport
@testable import Measurement
import XCTest

/// The stepped-sine analysis on blocks whose contents are known in closed
/// form, without a server: a memoryless polynomial's harmonics, a quantized
/// tone's noise, AES17's level convention, the band THD+N counts.
final class HarmonicAnalysisTests: XCTestCase {
    private func dB(_ ratio: Double) -> Double { 20 * log10(ratio) }

    /// y = x + a2·x² + a3·x³ of x = A·sin(ωt): the fundamental is A + ¾·a3·A³,
    /// the second harmonic a2·A²/2, the third a3·A³/4 (and a DC of a2·A²/2,
    /// which THD+N's band leaves out).
    func testAPolynomialsHarmonicsAreTheClosedForms() {
        let (a2, a3) = (0.01, 0.003)
        let stimulus = SineStimulus(frequency: 997, levelDBFS: -1, sampleRate: 48000)
        XCTAssertEqual(stimulus.frequency, 997)
        let amplitude = stimulus.amplitude
        let block = stimulus.samples(count: stimulus.blockLength).map { x -> Float in
            let x = Double(x)
            return Float(x + a2 * x * x + a3 * x * x * x)
        }
        let analysis = HarmonicAnalysis.analyse(block[...], sampleRate: 48000, fundamentalBin: stimulus.bin,
                                                fft: RealFFT(length: stimulus.blockLength))
        let fundamental = amplitude + 0.75 * a3 * pow(amplitude, 3)
        let second = a2 * amplitude * amplitude / 2, third = a3 * pow(amplitude, 3) / 4
        XCTAssertEqual(analysis.fundamentalDBFS, dB(fundamental), accuracy: 0.001)
        XCTAssertEqual(analysis.harmonics.first { $0.order == 2 }?.levelDB ?? 0, dB(second / fundamental), accuracy: 0.01)
        XCTAssertEqual(analysis.harmonics.first { $0.order == 3 }?.levelDB ?? 0, dB(third / fundamental), accuracy: 0.01)
        let thd = (second * second + third * third).squareRoot() / fundamental
        XCTAssertEqual(analysis.thdDB, dB(thd), accuracy: 0.01)
        XCTAssertEqual(analysis.thdPercent, thd * 100, accuracy: thd * 100 * 0.001)
        // Nothing but the two harmonics (and float rounding) in the band.
        XCTAssertEqual(analysis.thdPlusNoiseDB, dB(thd), accuracy: 0.01)
        XCTAssertLessThan(analysis.harmonics.first { $0.order == 4 }?.levelDBFS ?? 0, -130, "no 4th harmonic in a cubic")
        XCTAssertEqual(analysis.harmonics.map(\.order), Array(2...9))
    }

    /// A full-scale sine is 0 dBFS (AES17), whatever its frequency; its phase
    /// at the block's start is that of a sine, 0°.
    func testAFullScaleSineIsZeroDBFS() {
        for frequency in [20.0, 997, 10_000, 19_997] {
            let stimulus = SineStimulus(frequency: frequency, levelDBFS: 0, sampleRate: 48000)
            let block = stimulus.samples(count: stimulus.blockLength)
            let analysis = HarmonicAnalysis.analyse(block[...], sampleRate: 48000, fundamentalBin: stimulus.bin,
                                                    fft: RealFFT(length: stimulus.blockLength))
            XCTAssertEqual(analysis.fundamentalDBFS, 0, accuracy: 0.0001, "\(frequency) Hz")
            XCTAssertEqual(analysis.phaseDegrees, 0, accuracy: 0.01, "\(frequency) Hz")
            // A float sine's own rounding is the floor: far under what any converter reaches.
            XCTAssertLessThan(analysis.thdPlusNoiseDB, -130, "\(frequency) Hz")
        }
    }

    /// A tone quantized to 16 bits with TPDF dither: the residual is the
    /// dither and quantization noise, 3·LSB²/12 over the whole band of half
    /// the sample rate, of which the 20 Hz–20 kHz band holds its share.
    func testAQuantizedTonesNoiseIsTheTheorysShareOfTheBand() {
        let stimulus = SineStimulus(frequency: 997, levelDBFS: -1, sampleRate: 48000)
        var generator = SeededGenerator(state: 16)
        let lsb = 1.0 / 32768
        let block = stimulus.samples(count: stimulus.blockLength).map { x -> Float in
            let dither = (Double.random(in: 0..<1, using: &generator) - Double.random(in: 0..<1, using: &generator)) * lsb
            return Float(((Double(x) + dither) / lsb).rounded() * lsb)
        }
        let analysis = HarmonicAnalysis.analyse(block[...], sampleRate: 48000, fundamentalBin: stimulus.bin,
                                                fft: RealFFT(length: stimulus.blockLength))
        // Noise power: LSB²/12 (quantization) + LSB²/6 (TPDF dither) = LSB²/4, white to 24 kHz.
        let bandShare = (20_000.0 - 20) / 24_000
        let noiseRMS = (lsb * lsb / 4 * bandShare).squareRoot()
        // In dBFS the residual's RMS is counted against a full-scale sine's, 1/√2.
        XCTAssertEqual(analysis.residualDBFS, dB(noiseRMS * 2.0.squareRoot()), accuracy: 0.2)
    }

    /// scipy's periodogram on the same samples (`scripts/harmonics-scipy.py`):
    /// a polynomial's tone with dithered 16-bit noise on it: the fundamental,
    /// THD, THD+N and the harmonics it makes within 0.01 dB.
    func testScipyReadsTheSameBlockAlike() throws {
        let stimulus = SineStimulus(frequency: 997, levelDBFS: -6, sampleRate: 48000)
        var generator = SeededGenerator(state: 61)
        let lsb = 1.0 / 32768
        let block = stimulus.samples(count: stimulus.blockLength).map { x -> Float in
            let x = Double(x), y = x + 0.01 * x * x - 0.004 * x * x * x + 0.0005 * x * x * x * x * x
            let dither = (Double.random(in: 0..<1, using: &generator) - Double.random(in: 0..<1, using: &generator)) * lsb
            return Float(((y + dither) / lsb).rounded() * lsb)
        }
        let analysis = HarmonicAnalysis.analyse(block[...], sampleRate: 48000, fundamentalBin: stimulus.bin,
                                                fft: RealFFT(length: stimulus.blockLength))
        let path = NSTemporaryDirectory() + "harmonics-\(getpid()).f32"
        defer { unlink(path) }
        try block.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: path))
        let reference = try XCTUnwrap(try JSONSerialization.jsonObject(
            with: try scipyReference("harmonics-scipy.py", [path, "48000", "997", "9"])) as? [String: Any])
        XCTAssertEqual(analysis.fundamentalDBFS, try XCTUnwrap(reference["fundamental_dbfs"] as? Double), accuracy: 0.01)
        XCTAssertEqual(analysis.thdDB, try XCTUnwrap(reference["thd_db"] as? Double), accuracy: 0.01)
        XCTAssertEqual(analysis.thdPlusNoiseDB, try XCTUnwrap(reference["thd_n_db"] as? Double), accuracy: 0.01)
        let harmonics = try XCTUnwrap(reference["harmonics"] as? [String: Double])
        XCTAssertEqual(harmonics.count, analysis.harmonics.count)
        // Within 0.01 dB down to -120 dB; a bin of noise below that (this cubic-and-quintic makes no even
        // harmonic but the 2nd) within 0.1 dB: KissFFT in single precision rounds at about -170 dB a bin.
        for harmonic in analysis.harmonics {
            let tolerance = harmonic.levelDB > -120 ? 0.01 : 0.1
            XCTAssertEqual(harmonic.levelDB, try XCTUnwrap(harmonics[String(harmonic.order)]), accuracy: tolerance,
                           "H\(harmonic.order)")
        }
    }
}
