import Foundation

/// The noise in a block: its level in the band (20 Hz to 20 kHz, or half
/// the sample rate when lower) under each `Weighting`, in dBFS as AES17
/// counts it (a full-scale sine is 0 dBFS, so a signal's RMS reads 3.01 dB
/// above its RMS against full scale). Pure: it sees only samples.
///
/// Measured on the block's spectrum, without a window: each bin's power,
/// weighted by the weighting's gain at the bin's frequency, summed over the
/// band (Parseval), with `excludedBins` left out: a tone's bin, for the
/// residual of a coherent tone (AES17's notch, as `HarmonicAnalysis` makes it).
public struct NoiseAnalysis: Sendable, Equatable {
    /// The noise under one weighting.
    public struct Level: Sendable, Equatable {
        /// The weighting.
        public let weighting: Weighting
        /// dBFS (AES17); −infinity for digital silence.
        public let dBFS: Double
    }

    /// One level per weighting, in `Weighting.allCases` order.
    public let levels: [Level]
    /// The band summed, Hz.
    public let band: ClosedRange<Double>

    /// The level under `weighting`, dBFS.
    public func level(_ weighting: Weighting) -> Double {
        levels.first { $0.weighting == weighting }?.dBFS ?? -.infinity
    }

    /// The noise in `block` (exactly `fft.length` samples at `sampleRate`), less `excludedBins`.
    public static func analyse(_ block: ArraySlice<Float>, sampleRate: Int, excludedBins: Set<Int> = [],
                               band: ClosedRange<Double> = HarmonicAnalysis.standardBand, fft: RealFFT) -> NoiseAnalysis {
        let length = fft.length
        let spectrum = fft.spectrum(block)
        let binWidth = Double(sampleRate) / Double(length)
        let upper = min(band.upperBound, Double(sampleRate) / 2)
        let first = max(1, Int((band.lowerBound / binWidth).rounded(.up)))
        let last = min(length / 2 - 1, Int((upper / binWidth).rounded(.down)))
        var sums = [Double](repeating: 0, count: Weighting.allCases.count)
        if first <= last {
            for bin in first...last where !excludedBins.contains(bin) {
                let power = spectrum[bin].re * spectrum[bin].re + spectrum[bin].im * spectrum[bin].im
                guard power > 0 else { continue }
                let frequency = Double(bin) * binWidth
                for (index, weighting) in Weighting.allCases.enumerated() {
                    sums[index] += power * pow(10, weighting.gainDB(at: frequency) / 10)
                }
            }
        }
        // A bin's power is its sine's peak amplitude squared: against a full-scale sine's, 1.
        let levels = zip(Weighting.allCases, sums).map { Level(weighting: $0, dBFS: 10 * log10($1)) }
        return NoiseAnalysis(levels: levels, band: band.lowerBound...upper)
    }
}
