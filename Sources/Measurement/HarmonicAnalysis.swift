import Foundation

/// What a coherent block of a stepped-sine capture holds: the fundamental,
/// its harmonics, THD and THD+N. Pure: it sees only samples.
///
/// The block holds a whole number of the tone's cycles (`SineStimulus`), so
/// the tone is one bin of the spectrum and each harmonic another; no window
/// is used. Definitions, as the output names them:
/// * levels in dBFS as AES17 counts them: a sine whose peaks reach full scale is 0 dBFS;
/// * THD: the harmonics of orders 2 to `highestOrder` below half the sample
///   rate, root-sum-square, relative to the fundamental;
/// * THD+N (AES17): everything in the band (20 Hz to 20 kHz, or half the
///   sample rate when that is lower) but the fundamental, root-sum-square,
///   relative to the fundamental. The fundamental is removed exactly (its
///   bin: the ideal notch that coherent sampling allows) and the band is
///   limited exactly (an ideal low-pass at 20 kHz and high-pass at 20 Hz,
///   where AES17's standard filters are steep analogue-like ones).
///
/// The FFT is single precision (KissFFT as Debian builds it): it rounds at
/// about −170 dB a bin against full scale. Figures well above that are good
/// to 0.01 dB; a bin of noise 130 dB under the fundamental to about 0.1 dB.
public struct HarmonicAnalysis: Sendable, Equatable {
    /// One harmonic.
    public struct Harmonic: Sendable, Equatable {
        /// 2 for the second harmonic, and so on.
        public let order: Int
        /// The harmonic's frequency, Hz.
        public let frequency: Double
        /// Relative to the fundamental, dB.
        public let levelDB: Double
        /// dBFS (AES17).
        public let levelDBFS: Double
    }

    /// The sample rate of the block analysed, Hz.
    public let sampleRate: Int
    /// The fundamental's frequency, Hz.
    public let frequency: Double
    /// The fundamental's level, dBFS (AES17).
    public let fundamentalDBFS: Double
    /// The fundamental's phase at the block's first sample, degrees (0: a sine starting upwards).
    public let phaseDegrees: Double
    /// Harmonics 2 to the highest order asked for, below half the sample rate.
    public let harmonics: [Harmonic]
    /// THD as a ratio of amplitudes (0.01 is 1 %, −40 dB).
    public let thdRatio: Double
    /// THD+N as a ratio of amplitudes.
    public let thdPlusNoiseRatio: Double
    /// What the band holds but the fundamental, dBFS (AES17): the residual's level.
    public let residualDBFS: Double
    /// The band THD+N counts, Hz.
    public let band: ClosedRange<Double>

    /// THD, dB against the fundamental.
    public var thdDB: Double { 20 * log10(thdRatio) }
    /// THD, percent of the fundamental.
    public var thdPercent: Double { thdRatio * 100 }
    /// THD+N (AES17), dB against the fundamental.
    public var thdPlusNoiseDB: Double { 20 * log10(thdPlusNoiseRatio) }
    /// THD+N (AES17), percent of the fundamental.
    public var thdPlusNoisePercent: Double { thdPlusNoiseRatio * 100 }

    /// AES17's band for THD+N, Hz.
    public static let standardBand: ClosedRange<Double> = 20...20_000

    /// The analysis of `block` (exactly `fft.length` samples at `sampleRate`)
    /// whose fundamental is on bin `fundamentalBin`.
    public static func analyse(_ block: ArraySlice<Float>, sampleRate: Int, fundamentalBin: Int, highestOrder: Int = 9,
                               band: ClosedRange<Double> = standardBand, fft: RealFFT) -> HarmonicAnalysis {
        let length = fft.length
        let spectrum = fft.spectrum(block)
        let binWidth = Double(sampleRate) / Double(length)
        func power(_ bin: Int) -> Double { spectrum[bin].re * spectrum[bin].re + spectrum[bin].im * spectrum[bin].im }
        func dB(_ ratio: Double) -> Double { 20 * log10(ratio) }
        let fundamental = power(fundamentalBin).squareRoot()
        var harmonics: [Harmonic] = []
        var harmonicPower = 0.0
        if highestOrder >= 2 {
            for order in 2...highestOrder where order * fundamentalBin < length / 2 {
                let amplitude = power(order * fundamentalBin).squareRoot()
                harmonicPower += amplitude * amplitude
                harmonics.append(Harmonic(order: order, frequency: Double(order * fundamentalBin) * binWidth,
                                          levelDB: dB(amplitude / fundamental), levelDBFS: dB(amplitude)))
            }
        }
        let upper = min(band.upperBound, Double(sampleRate) / 2)
        let first = max(1, Int((band.lowerBound / binWidth).rounded(.up)))
        let last = min(length / 2 - 1, Int((upper / binWidth).rounded(.down)))
        var residualPower = 0.0
        if first <= last {
            for bin in first...last where bin != fundamentalBin { residualPower += power(bin) }
        }
        // The spectrum is of a sine's coefficient at the bin: phase 0 is a cosine, a sine is −90°.
        let phase = atan2(spectrum[fundamentalBin].im, spectrum[fundamentalBin].re) * 180 / .pi + 90
        return HarmonicAnalysis(sampleRate: sampleRate, frequency: Double(fundamentalBin) * binWidth,
                                fundamentalDBFS: dB(fundamental), phaseDegrees: Self.wrapped(phase), harmonics: harmonics,
                                thdRatio: harmonicPower.squareRoot() / fundamental,
                                thdPlusNoiseRatio: residualPower.squareRoot() / fundamental,
                                residualDBFS: dB(residualPower.squareRoot()), band: band.lowerBound...upper)
    }

    /// An angle in (−180, 180] degrees.
    static func wrapped(_ degrees: Double) -> Double {
        var value = degrees.truncatingRemainder(dividingBy: 360)
        if value > 180 { value -= 360 }
        if value <= -180 { value += 360 }
        return value
    }
}
