import Foundation

/// ITU-R BS.468-4's quasi-peak detector, which reads noise through the 468
/// weighting curve: the signal full-wave rectified, then two peak followers
/// in cascade (a fast charge with a slow discharge, then the reading's own
/// rise and fall).
///
/// The Recommendation gives no time constants: it defines the detector by
/// what it must read, in eleven windows (Table 2: single 5 kHz bursts of
/// 1 to 200 ms; Table 3: 5 ms bursts 2, 10 and 100 times a second), each a
/// percentage of the reading the same tone gives steadily. These four
/// constants were fitted to the windows' reference readings and then to the
/// widest margin from their edges (0.24 dB at worst, the 100-per-second
/// window being 0.54 dB wide); `QuasiPeakMeterTests` holds them to all
/// eleven at 44.1, 48 and 96 kHz.
///
/// Levels are dBFS as AES17 counts them: a steady full-scale 1 kHz sine
/// (where the 468 curve is 0 dB) reads 0 dBFS.
public struct QuasiPeakMeter: Sendable {
    /// The first follower's charge time constant, seconds.
    public static let chargeSeconds = 0.00139
    /// The first follower's discharge time constant, seconds.
    public static let dischargeSeconds = 0.319
    /// The reading's rise time constant, seconds.
    public static let riseSeconds = 0.133
    /// The reading's fall time constant, seconds.
    public static let fallSeconds = 0.552

    /// Hz.
    public let sampleRate: Int
    /// The followers' coefficients per sample.
    private struct Coefficients {
        let charge: Double, discharge: Double, rise: Double, fall: Double

        init(sampleRate: Int) {
            let rate = Double(sampleRate)
            charge = 1 - exp(-1 / (QuasiPeakMeter.chargeSeconds * rate))
            discharge = exp(-1 / (QuasiPeakMeter.dischargeSeconds * rate))
            rise = 1 - exp(-1 / (QuasiPeakMeter.riseSeconds * rate))
            fall = exp(-1 / (QuasiPeakMeter.fallSeconds * rate))
        }

        func trace(_ signal: [Double]) -> [Double] {
            var (held, reading) = (0.0, 0.0)
            return signal.map { sample in
                let rectified = abs(sample)
                held = rectified > held ? held + (rectified - held) * charge : held * discharge
                reading = held > reading ? reading + (held - reading) * rise : reading * fall
                return reading
            }
        }

        /// What a steady unit sine at `frequency` reads once settled: the
        /// highest reading over its third second.
        func steadyReading(frequency: Double, sampleRate: Int) -> Double {
            let sine = (0..<(3 * sampleRate)).map { sin(2 * Double.pi * frequency * Double($0) / Double(sampleRate)) }
            return trace(sine)[(2 * sampleRate)...].max() ?? 0
        }
    }

    private let coefficients: Coefficients
    /// The settled reading of a steady full-scale 1 kHz sine (0 dBFS).
    private let fullScale: Double

    /// A detector at `sampleRate`.
    public init(sampleRate: Int) {
        self.sampleRate = sampleRate
        coefficients = Coefficients(sampleRate: sampleRate)
        fullScale = coefficients.steadyReading(frequency: 1000, sampleRate: sampleRate)
    }

    /// The reading after each sample of `signal` (full scale 1), from rest,
    /// on the detector's own scale (`dBFS(_:)` converts).
    public func trace(_ signal: [Double]) -> [Double] { coefficients.trace(signal) }

    /// A reading on the detector's scale as dBFS (−∞: digital silence).
    public func dBFS(_ reading: Double) -> Double { 20 * log10(reading / fullScale) }

    /// What a steady unit sine at `frequency` reads once settled: the highest
    /// reading over its third second, on the detector's scale.
    public func steadyReading(frequency: Double) -> Double {
        coefficients.steadyReading(frequency: frequency, sampleRate: sampleRate)
    }

    /// The 468-weighted quasi-peak level of `block` (exactly `fft.length`
    /// samples), dBFS: the block weighted by the 468 curve in AES17's
    /// 20 Hz-20 kHz band (on its transform, so the block repeats seamlessly),
    /// played four times over, and the highest reading of the last two.
    public func weightedNoiseDBFS(_ block: ArraySlice<Float>, fft: RealFFT) -> Double {
        let binWidth = Double(sampleRate) / Double(fft.length)
        let band = HarmonicAnalysis.standardBand
        let weighted = fft.transform(block).enumerated().map { bin, value -> (re: Double, im: Double) in
            let frequency = Double(bin) * binWidth
            guard band.contains(frequency) else { return (0, 0) }
            let gain = pow(10, Weighting.itu468DB(at: frequency) / 20)
            return (value.re * gain, value.im * gain)
        }
        let once = fft.inverse(weighted)
        let readings = trace(Array([[Double]](repeating: once, count: 4).joined()))
        return dBFS(readings[(2 * once.count)...].max() ?? 0)
    }
}
