@testable import Measurement
import XCTest

/// A period lost as digital silence inside what an input should hear is a
/// dropout; the path's delay before it, a tail after it, a short stretch of
/// zeros and an input nothing feeds are not.
final class DropoutCheckTests: XCTestCase {
    private let tone = SineStimulus(frequency: 997, levelDBFS: -20, sampleRate: 48000).samples(count: 48000, fadeIn: 480)

    /// What came back of `tone` through a path of `delay` frames (as long as the tone: its end is cut off).
    private func heard(delay: Int) -> [Float] { [Float](repeating: 0, count: delay) + tone.prefix(tone.count - delay) }

    func testALostPeriodInsideTheToneIsADropout() {
        var captured = heard(delay: 300)
        for index in 20_000..<20_256 { captured[index] = 0 }
        XCTAssertEqual(DropoutCheck.firstDropout(in: captured, stimulus: tone, minimumFrames: 256), 20_000)
    }

    /// The input should hear the tone to the end of the run: a last period lost is a dropout too.
    func testALostLastPeriodIsADropout() {
        var captured = heard(delay: 300)
        for index in (captured.count - 256)..<captured.count { captured[index] = 0 }
        XCTAssertEqual(DropoutCheck.firstDropout(in: captured, stimulus: tone, minimumFrames: 256), captured.count - 256)
    }

    func testTheDelayBeforeItAndSilenceAfterTheStimulusAreNot() {
        XCTAssertNil(DropoutCheck.firstDropout(in: heard(delay: 3000), stimulus: tone, minimumFrames: 256))
        // A stimulus that ends in silence (a sweep's tail): what comes back after it may be silence.
        let ending = Array(tone.prefix(30_000)) + [Float](repeating: 0, count: 18_000)
        let captured = [Float](repeating: 0, count: 256) + ending.prefix(ending.count - 256)
        XCTAssertNil(DropoutCheck.firstDropout(in: captured, stimulus: ending, minimumFrames: 256))
    }

    func testZerosShorterThanAPeriodAndSilentInputsAreNot() {
        var captured = heard(delay: 300)
        for index in 20_000..<20_255 { captured[index] = 0 }
        XCTAssertNil(DropoutCheck.firstDropout(in: captured, stimulus: tone, minimumFrames: 256))
        XCTAssertNil(DropoutCheck.firstDropout(in: [Float](repeating: 0, count: 48000), stimulus: tone, minimumFrames: 256))
        // An undriven input that hears a leak: only the stretch it heard is checked.
        var leak = [Float](repeating: 0, count: 48000)
        for index in 1000..<20_000 { leak[index] = tone[index] / 1000 }
        XCTAssertNil(DropoutCheck.firstDropout(in: leak, stimulus: nil, minimumFrames: 256))
        for index in 5000..<5300 { leak[index] = 0 }
        XCTAssertEqual(DropoutCheck.firstDropout(in: leak, stimulus: nil, minimumFrames: 256), 5000)
    }

    /// A sweep whose first period was lost comes back late against its
    /// impulse response's peak; one heard whole, heard early (a path that
    /// answers before its peak) or rounded to 16 bits does not.
    func testASweepsLostStartIsLate() {
        let sweep = SweepStimulus(startFrequency: 20, endFrequency: 20_000, seconds: 1, levelDBFS: -6, sampleRate: 48000).samples()
        let delayed = [Float](repeating: 0, count: 256) + sweep.prefix(sweep.count - 256)
        let analysis = SweepAnalysis.analyse(played: sweep, recorded: delayed,
                                             sweep: SweepStimulus(startFrequency: 20, endFrequency: 20_000, seconds: 1, levelDBFS: -6,
                                                                  sampleRate: 48000))
        XCTAssertEqual(analysis.delayFrames, 256)
        XCTAssertNil(SweepMeasurement.lateStart(delayed, sweepStart: 0, delay: 256, period: 256))
        // The sweep sounds from its second frame (the fade-in starts at zero): its first 256 sounding frames lost.
        var lost = delayed
        for index in 0..<(256 + 1 + 256) { lost[index] = 0 }
        XCTAssertEqual(SweepMeasurement.lateStart(lost, sweepStart: 0, delay: 256, period: 256), 257)
        XCTAssertNil(SweepMeasurement.lateStart(lost, sweepStart: 0, delay: 256, period: 1024), "less than a period late")
        // The run's first cycle lost (PipeWire under load: its null sink silent for one quantum): 255 sounding frames.
        var firstCycle = delayed
        for index in 0..<(256 + 256) { firstCycle[index] = 0 }
        XCTAssertEqual(SweepMeasurement.lateStart(firstCycle, sweepStart: 0, delay: 256, period: 256), 256)
        // With the lead of silence a run plays first, the same lost cycle costs silence only; the sweep's start is whole.
        let lead = SweepMeasurement.leadFrames(48000)
        XCTAssertGreaterThanOrEqual(lead, 4096, "a lost cycle of up to 4096 frames falls in the lead")
        var led = [Float](repeating: 0, count: 256 + lead) + sweep.prefix(sweep.count - 256 - lead)
        XCTAssertNil(SweepMeasurement.lateStart(led, sweepStart: lead, delay: 256, period: 256))
        for index in 0..<(256 + lead + 256) { led[index] = 0 }
        XCTAssertEqual(SweepMeasurement.lateStart(led, sweepStart: lead, delay: 256, period: 256), 256, "the sweep's first cycle lost")
        XCTAssertNil(SweepMeasurement.lateStart(delayed, sweepStart: 0, delay: 400, period: 256), "heard before the peak")
        // Rounded to 16 bits without dither, the fade-in's first frames are zeros: not a lost start, even at 32 frames.
        let rounded = delayed.map { (($0 * 32768).rounded()) / 32768 }
        let silentFrames = (rounded.firstIndex { $0 != 0 } ?? 0) - 257
        XCTAssertGreaterThan(silentFrames, 10, "the fade-in rounds to zero for a while")
        XCTAssertNil(SweepMeasurement.lateStart(rounded, sweepStart: 0, delay: 256, period: 32), "\(silentFrames) frames of rounding")
    }
}
