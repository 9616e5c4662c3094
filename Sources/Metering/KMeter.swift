import Foundation

/// Bob Katz's K-system meter: RMS, calibrated so a sine reads its own level
/// (AES17), averaged over 600 ms (here a first-order mean-square average
/// whose time constant makes a tone reach 99 % of its power in 600 ms), read
/// on a scale whose 0 is `scale` dB below full scale (K-12, K-14, K-20).
public struct KMeter: Sendable {
    /// The scale: 12, 14 or 20.
    public let scale: Int
    let coefficient: Double
    private var meanSquare = 0.0

    /// A K-`scale` meter at `sampleRate`.
    public init(scale: Int, sampleRate: Int) {
        self.scale = scale
        // 1 - e^(-0.6/τ) = 0.99  →  τ = 0.6 / ln 100.
        let tau = 0.6 / log(100.0)
        coefficient = 1 - exp(-1 / (tau * Double(sampleRate)))
    }

    /// Feeds one sample.
    @inline(__always)
    public mutating func process(_ sample: Float) {
        let square = Double(sample) * Double(sample)
        meanSquare += (square - meanSquare) * coefficient
    }

    /// The RMS level, dBFS (AES17: a full-scale sine is 0 dBFS).
    public var rmsDBFS: Double { meanSquare > 0 ? 10 * log10(2 * meanSquare) : -.infinity }

    /// The reading on the K scale: 0 at −`scale` dBFS RMS.
    public var reading: Double { rmsDBFS + Double(scale) }
}
