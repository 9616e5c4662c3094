import Foundation
import JackTestSupport
@testable import Measurement
import XCTest

/// The intermodulation analysis on a polynomial's two-tone block, against
/// the closed forms (`IntermodulationClosedForm`), for every test.
final class IntermodulationAnalysisTests: XCTestCase {
    func testAPolynomialsProductsAreTheClosedFormsInEveryTest() throws {
        let (a2, a3) = (0.02, 0.005)
        let fft = RealFFT(length: 48000)
        for test in IntermodulationTest.allCases {
            for level in [-1.0, -12.0] {
                let x = try IntermodulationMeasurement.stimulus(test, levelDBFS: level, sampleRate: 48000)
                let y = x.map { sample -> Float in
                    let v = Double(sample)
                    return Float(v + a2 * v * v + a3 * v * v * v)
                }
                let block = SteppedSine.analysedBlock(of: y, SineStimulus(frequency: 1000, levelDBFS: 0, sampleRate: 48000))
                let analysis = IntermodulationAnalysis.analyse(block, sampleRate: 48000, test: test, fft: fft)
                let expected = IntermodulationClosedForm(test: test, a2: a2, a3: a3, levelDBFS: level)
                XCTAssertEqual(analysis.dB, expected.dB, accuracy: 0.01, "\(test) at \(level) dBFS")
                for order in [2, 3] {
                    XCTAssertEqual(20 * log10(try XCTUnwrap(analysis.orders[order])), 20 * log10(try XCTUnwrap(expected.orders[order])),
                                   accuracy: 0.01, "\(test) d\(order) at \(level) dBFS")
                }
                XCTAssertEqual(analysis.highToneDBFS, 20 * log10(expected.tones.high), accuracy: 0.001, "\(test)")
                XCTAssertEqual(analysis.lowToneDBFS, 20 * log10(expected.tones.low), accuracy: 0.001, "\(test)")
            }
        }
    }

    /// A straight wire: no products above the float's rounding.
    func testAStraightWireHasNoProducts() throws {
        let fft = RealFFT(length: 48000)
        for test in IntermodulationTest.allCases {
            let x = try IntermodulationMeasurement.stimulus(test, levelDBFS: -1, sampleRate: 48000)
            let block = SteppedSine.analysedBlock(of: x, SineStimulus(frequency: 1000, levelDBFS: 0, sampleRate: 48000))
            let analysis = IntermodulationAnalysis.analyse(block, sampleRate: 48000, test: test, fft: fft)
            XCTAssertLessThan(analysis.dB, -130, "\(test)")
        }
    }
}
