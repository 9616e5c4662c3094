import Foundation

/// The noise floor against frequency: what an input holds while digital
/// silence is played (a silent pass), in fractional-octave bands, each
/// band's level in dBFS as AES17 counts (a full-scale sine is 0 dBFS), as a
/// real-time analyser shows it. A band's level is the power of its bins of
/// a one-second coherent block (1 Hz apart), summed.
public struct NoiseSpectrum: Sendable, Equatable {
    /// One band.
    public struct Band: Sendable, Equatable {
        /// The band's centre, Hz.
        public let frequency: Double
        /// Its edges, Hz: the centre times 2^(±1/(2·perOctave)).
        public let low: Double
        /// The upper edge, Hz.
        public let high: Double
        /// The noise in it, dBFS (−∞: digital silence).
        public let dBFS: Double
    }

    /// The bands, lowest first.
    public let bands: [Band]
    /// Bands an octave.
    public let perOctave: Int

    /// The noise in `block` (exactly `fft.length` samples at `sampleRate`),
    /// less `excludedBins` (a tone's), in bands centred on `centres` (Hz),
    /// `perOctave` bands an octave wide.
    public static func analyse(_ block: ArraySlice<Float>, sampleRate: Int, centres: [Double], perOctave: Int = 3,
                               excludedBins: Set<Int> = [], fft: RealFFT) -> NoiseSpectrum {
        let spectrum = fft.spectrum(block)
        let binWidth = Double(sampleRate) / Double(fft.length)
        let halfWidth = pow(2, 1 / (2 * Double(perOctave)))
        let bands = centres.map { centre in
            let (low, high) = (centre / halfWidth, centre * halfWidth)
            let first = max(1, Int((low / binWidth).rounded(.up)))
            let last = min(fft.length / 2 - 1, Int((high / binWidth).rounded(.down)))
            var power = 0.0
            if first <= last {
                // A bin's power is its sine's peak amplitude squared: against a full-scale sine's, 1.
                for bin in first...last where !excludedBins.contains(bin) { power += spectrum[bin].re * spectrum[bin].re + spectrum[bin].im * spectrum[bin].im }
            }
            return Band(frequency: centre, low: low, high: high, dBFS: 10 * log10(power))
        }
        return NoiseSpectrum(bands: bands, perOctave: perOctave)
    }

    /// `perOctave` band centres an octave from 20 Hz, the last band the one that holds 20 kHz (AES17's band).
    public static func centres(perOctave: Int) -> [Double] {
        SweepAnalysis.logFrequencies(from: HarmonicAnalysis.standardBand.lowerBound,
                                     to: HarmonicAnalysis.standardBand.upperBound * pow(2, 1 / (2 * Double(perOctave))),
                                     perOctave: perOctave)
    }
}
