import Foundation
@testable import Measurement
import XCTest

/// THD+N against level without a server: the levels a staircase climbs, the
/// staircase itself (each step's block a coherent tone at its level), and
/// where the maximum level is found.
final class LevelStaircaseTests: XCTestCase {
    private func staircase(from: Double, to: Double, step: Double) -> LevelStaircase {
        var measurement = LevelStaircase(serverName: "none", outputPorts: ["a"], inputPorts: ["b"])
        (measurement.fromDBFS, measurement.toDBFS, measurement.stepDB) = (from, to, step)
        return measurement
    }

    /// From the lowest by the step, and the highest last even when the step does not land on it.
    func testTheLevelsClimbByTheStepAndEndOnTheHighest() throws {
        XCTAssertEqual(try staircase(from: -6, to: 0, step: 2).levels(), [-6, -4, -2, 0])
        XCTAssertEqual(try staircase(from: -5, to: 0, step: 2).levels(), [-5, -3, -1, 0])
        XCTAssertEqual(try staircase(from: -1, to: -0.5, step: 0.1).levels().count, 6)
        XCTAssertThrowsError(try staircase(from: 0, to: -3, step: 1).levels())
        XCTAssertThrowsError(try staircase(from: -120, to: 0, step: 0.5).levels(), "more steps than a run holds")
    }

    /// Every step's block, analysed as the measurement does, is the tone at
    /// its level (coherent: nothing else in the band), however the ramps before it went.
    func testEachStepsBlockIsACoherentToneAtItsLevel() throws {
        let levels = [-30.0, -17.5, -3, 0]
        let played = try LevelStaircase.staircase(frequency: 997, levels: levels, sampleRate: 48000)
        XCTAssertEqual(played.blockStarts.count, levels.count)
        XCTAssertEqual(played.samples.count, played.blockStarts[3] + 48000)
        // The block after the path has settled: 0.5 s in at first, then 0.2 s after each 10 ms ramp.
        XCTAssertEqual(played.blockStarts[0], 24000)
        XCTAssertEqual(played.blockStarts[1] - played.blockStarts[0], 48000 + 480 + 9600)
        let fft = RealFFT(length: played.tone.blockLength)
        for (level, start) in zip(levels, played.blockStarts) {
            let analysis = HarmonicAnalysis.analyse(played.samples[start..<(start + 48000)], sampleRate: 48000,
                                                    fundamentalBin: played.tone.bin, fft: fft)
            XCTAssertEqual(analysis.frequency, 997)
            XCTAssertEqual(analysis.fundamentalDBFS, level, accuracy: 0.001)
            XCTAssertLessThan(analysis.thdPlusNoiseDB, -120, "a ramp's tail in the block: \(level) dBFS")
        }
        // No jump anywhere: the ramps are smooth (a full-scale 997 Hz sine moves at most 0.131 a sample).
        let largestStep = zip(played.samples, played.samples.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        XCTAssertLessThan(largestStep, 0.132)
    }

    /// Between two steps, straight in dB; full scale when a staircase to 0
    /// dBFS never reaches the figure; unknown (no number) when one below full
    /// scale does not, or when the lowest step already does.
    func testTheMaximumLevelIsWhereTHDNFirstReachesTheFigure() {
        let crossing = LevelStaircase.maximumLevel([(-20, -60), (-18, -50), (-16, -44), (-14, -36), (-12, -30)], reaching: -40)
        XCTAssertEqual(crossing, .crossed(-15))
        XCTAssertEqual(crossing.dBFS, -15)
        // Noise can make THD+N dip after it first crossed: the first crossing counts.
        XCTAssertEqual(LevelStaircase.maximumLevel([(-4, -45), (-3, -35), (-2, -41), (-1, -30)], reaching: -40), .crossed(-3.5))
        XCTAssertEqual(LevelStaircase.maximumLevel([(-2, -90), (-1, -89), (0, -88)], reaching: -40), .fullScale)
        XCTAssertEqual(LevelStaircase.maximumLevel([(-2, -90), (-1, -89), (0, -88)], reaching: -40).dBFS, 0)
        let below = LevelStaircase.maximumLevel([(-20, -90), (-10, -80)], reaching: -40)
        XCTAssertEqual(below, .notReached(highestDBFS: -10))
        XCTAssertNil(below.dBFS)
        let above = LevelStaircase.maximumLevel([(-20, -30), (-10, -20)], reaching: -40)
        XCTAssertEqual(above, .reachedAtLowest(lowestDBFS: -20))
        XCTAssertNil(above.dBFS)
    }
}
