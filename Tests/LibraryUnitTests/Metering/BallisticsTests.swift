import Foundation
@testable import Metering
import XCTest

/// The meters' time behaviour, checked with tone bursts and steps against
/// what IEC 60268-10 (PPM), IEC 60268-17 (VU) and the K-system say.
final class BallisticsTests: XCTestCase {
    let rate = 48000

    /// A sine of `frequency` at `amplitude` for `seconds`, then silence for `after` seconds.
    private func burst(_ frequency: Double, seconds: Double, amplitude: Float = 1, after: Double = 0) -> [Float] {
        let on = Int(seconds * Double(rate))
        return (0..<(on + Int(after * Double(rate)))).map { n in
            n < on ? amplitude * Float(sin(2 * Double.pi * frequency * Double(n) / Double(rate))) : 0
        }
    }

    private func highestPPM(_ kind: PeakProgrammeMeter.Kind, _ samples: [Float]) -> Double {
        var meter = PeakProgrammeMeter(kind: kind, sampleRate: rate)
        var highest = -Double.infinity
        for sample in samples {
            meter.process(sample)
            highest = max(highest, meter.decibels)
        }
        return highest
    }

    func testPPMBurstsReadTheirIntegrationTimeBelowTheSteadyTone() {
        XCTAssertEqual(highestPPM(.typeIIb, burst(1000, seconds: 0.5)), 0, accuracy: 0.05, "a steady 1 kHz tone reads its level")
        XCTAssertEqual(highestPPM(.typeI, burst(1000, seconds: 0.5, amplitude: 0.1)), -20, accuracy: 0.05)
        let steadyII = highestPPM(.typeIIb, burst(5000, seconds: 0.5))
        let steadyI = highestPPM(.typeI, burst(5000, seconds: 0.5))
        XCTAssertEqual(steadyII, 0, accuracy: 0.5, "and a steady 5 kHz tone nearly (the detector sees its samples)")
        XCTAssertEqual(highestPPM(.typeIIb, burst(5000, seconds: 0.010)) - steadyII, -4, accuracy: 0.75)
        XCTAssertEqual(highestPPM(.typeI, burst(5000, seconds: 0.005)) - steadyI, -2, accuracy: 0.5)
        // Longer bursts read closer to the steady tone, shorter ones lower: a quasi-peak meter.
        let readings = [0.003, 0.005, 0.010, 0.020, 0.100].map { highestPPM(.typeIIb, burst(5000, seconds: $0)) }
        XCTAssertEqual(readings, readings.sorted())
        XCTAssertEqual(readings.last!, steadyII, accuracy: 0.5)
        // At another rate the same burst reads the same.
        var meter = PeakProgrammeMeter(kind: .typeIIb, sampleRate: 96000)
        var highest = -Double.infinity
        for n in 0..<960 {
            meter.process(Float(sin(2 * Double.pi * 5000 * Double(n) / 96000)))
            highest = max(highest, meter.decibels)
        }
        XCTAssertEqual(highest, -4, accuracy: 0.75)
    }

    func testPPMReturnTimes() {
        for (kind, fall, seconds) in [(PeakProgrammeMeter.Kind.typeIIb, 24.0, 2.8), (.typeI, 20.0, 1.7)] {
            var meter = PeakProgrammeMeter(kind: kind, sampleRate: rate)
            for sample in burst(1000, seconds: 1) { meter.process(sample) }
            let start = meter.decibels
            var elapsed = 0
            while meter.decibels > start - fall {
                meter.process(0)
                elapsed += 1
            }
            XCTAssertEqual(Double(elapsed) / Double(rate), seconds, accuracy: 0.3, "\(kind) returns \(fall) dB")
        }
    }

    func testVUStepRisesToNinetyNinePercentIn300msWithTheSpecifiedOvershoot() {
        var meter = VolumeUnitMeter(sampleRate: rate, referenceDBFS: -18)
        let tone = burst(1000, seconds: 2, amplitude: Float(pow(10, -18.0 / 20)))
        var positions: [Double] = []
        for (n, sample) in tone.enumerated() {
            meter.process(sample)
            if n % 48 == 0 { positions.append(pow(10, meter.reading / 20)) }   // every millisecond, linear
        }
        let steady = positions.suffix(200).reduce(0, +) / 200
        XCTAssertEqual(20 * log10(steady), 0, accuracy: 0.05, "the reference sine reads 0 VU")
        let rise = Double(positions.firstIndex { $0 >= 0.99 * steady }!) / 1000
        XCTAssertEqual(rise, 0.3, accuracy: 0.03, "99 % reached at 300 ms (±10 %)")
        let overshoot = positions.max()! / steady - 1
        XCTAssertGreaterThanOrEqual(overshoot, 0.01)
        XCTAssertLessThanOrEqual(overshoot, 0.015)
    }

    func testKMeterScalesPutTheirReferenceAtZero() {
        for (scale, level) in [(12, -12.0), (14, -14.0), (20, -20.0)] {
            var meter = KMeter(scale: scale, sampleRate: rate)
            for sample in burst(997, seconds: 2, amplitude: Float(pow(10, level / 20))) { meter.process(sample) }
            XCTAssertEqual(meter.reading, 0, accuracy: 0.05, "K-\(scale): a sine at \(level) dBFS reads 0")
        }
        // 600 ms integration: a tone reaches 90 % of its power (−0.46 dB) at 0.3 s and 99 % (−0.04 dB) at 0.6 s.
        var meter = KMeter(scale: 14, sampleRate: rate)
        let tone = burst(997, seconds: 1, amplitude: Float(pow(10, -14.0 / 20)))
        for sample in tone[0..<(rate * 3 / 10)] { meter.process(sample) }
        XCTAssertEqual(meter.reading, 10 * log10(0.9), accuracy: 0.05)
        for sample in tone[(rate * 3 / 10)..<(rate * 6 / 10)] { meter.process(sample) }
        XCTAssertEqual(meter.reading, 10 * log10(0.99), accuracy: 0.05)
    }

    func testProgrammeMeterIntervalsAndRMS() throws {
        var configuration = ProgrammeMeter.Configuration(channels: 2, sampleRate: rate, layout: .stereo,
                                                         sources: ["left", "right"])
        configuration.kScale = 20
        let meter = try ProgrammeMeter(configuration: configuration)
        // Left: a −6 dBFS sine; right: silence.
        let left = burst(1000, seconds: 1, amplitude: 0.5)
        var interleaved = [Float](repeating: 0, count: left.count * 2)
        for (n, sample) in left.enumerated() { interleaved[2 * n] = sample }
        interleaved.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: left.count) }
        let reading = meter.reading()
        XCTAssertEqual(reading.seconds, 1)
        XCTAssertEqual(reading.channels[0].rmsDBFS, -6.02, accuracy: 0.01, "AES17: a sine's RMS reads its peak level")
        XCTAssertEqual(reading.channels[0].samplePeakDBFS, -6.02, accuracy: 0.01)
        XCTAssertEqual(reading.channels[1].samplePeakDBFS, -.infinity)
        XCTAssertEqual(reading.channels[0].kMeter, 20 - 6.02, accuracy: 0.1)
        XCTAssertEqual(reading.channels[0].source, "left")
        // The next interval starts afresh.
        XCTAssertEqual(meter.reading().channels[0].samplePeakDBFS, -.infinity)
        XCTAssertEqual(meter.summary().channels[0].samplePeakDBFS, -6.02, accuracy: 0.01)
    }
}

/// The true-peak detector against libebur128's own on the same audio.
final class TruePeakTests: XCTestCase {
    func testDetectorAgreesWithLibebur128() throws {
        for rate in [48000, 96000] {
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            let frames = rate * 2
            var samples = [Float](repeating: 0, count: frames * 2)
            for index in samples.indices {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                // Noise with a loud high-frequency burst, where samples and true peak differ most.
                let noise = Float(Int64(bitPattern: state) >> 40) / Float(1 << 23) * 0.3
                let frame = index / 2
                samples[index] = frame > rate && frame < rate + 2000
                    ? 0.7 * Float(sin(Double(frame) * 2 * .pi * 0.23 + Double(index % 2))) : noise
            }
            let reference = try ProgrammeLoudness(channels: 2, layout: .stereo, sampleRate: rate, truePeak: true)
            var detector = TruePeakDetector(channels: 2, sampleRate: rate)
            var ours = [0.0, 0.0]
            // In uneven chunks, as periods and intervals cut it.
            var offset = 0
            for chunk in [64, 1000, 4800, 333].cycled(until: frames) {
                let take = min(chunk, frames - offset)
                samples.withUnsafeBufferPointer { buffer in
                    reference.add(buffer.baseAddress! + offset * 2, frames: take)
                    let peaks = detector.peaks(buffer.baseAddress! + offset * 2, frames: take)
                    ours = zip(ours, peaks).map { max($0, $1) }
                }
                offset += take
            }
            for channel in 0..<2 {
                let theirs = reference.truePeak(channel: channel)
                XCTAssertEqual(20 * log10(ours[channel]), 20 * log10(theirs), accuracy: 0.01, "\(rate) Hz channel \(channel)")
                let samplePeak = samples.enumerated().filter { $0.offset % 2 == channel }.map { abs($0.element) }.max()!
                XCTAssertGreaterThan(ours[channel], Double(samplePeak), "the burst's true peak lies between samples")
            }
        }
    }

    func testAStreamJoinedMidwayHasNoStepOutOfTheSilenceBefore() {
        // A constant 0.5: a file that begins with it steps out of silence, and
        // the interpolated step overshoots; a live meter that joins a
        // programme already at 0.5 must read just 0.5, whatever its chunks.
        let samples = [Float](repeating: 0.5, count: 2 * 4800)
        for (joins, expected) in [(false, 0.5625), (true, 0.5)] {
            var detector = TruePeakDetector(channels: 2, sampleRate: 48000, joinsMidStream: joins)
            var peak = 0.0
            var offset = 0
            for chunk in [3, 5, 16, 4776] {
                samples.withUnsafeBufferPointer { buffer in
                    peak = Swift.max(peak, detector.peaks(buffer.baseAddress! + offset * 2, frames: chunk).max()!)
                }
                offset += chunk
            }
            XCTAssertEqual(peak, expected, accuracy: 0.005, "joins mid-stream: \(joins)")
        }
    }
}

private extension Array where Element == Int {
    /// The elements repeated until they add up to at least `total`.
    func cycled(until total: Int) -> [Int] {
        var result: [Int] = []
        var sum = 0
        while sum < total {
            for element in self where sum < total {
                result.append(element)
                sum += element
            }
        }
        return result
    }
}
