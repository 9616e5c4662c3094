import Foundation

/// A synchronized exponential sweep (Novak et al. 2015, after Farina): its
/// rate L is chosen so that every harmonic's response starts in phase with
/// the linear one, the k-th one L·ln(k) seconds ahead of it. The sweep
/// starts at phase 0 at `startFrequency` and runs up to `endFrequency`,
/// faded in and out on raised cosines, followed by silence for the path's
/// delay and the device's tail to come back in.
public struct SweepStimulus: Sendable, Equatable {
    /// Hz.
    public let sampleRate: Int
    /// Hz.
    public let startFrequency: Double
    /// Hz.
    public let endFrequency: Double
    /// Peak level, dBFS (AES17: a full-scale sine is 0 dBFS).
    public let levelDBFS: Double
    /// The sweep's rate, seconds: f(t) = startFrequency · e^(t/L).
    public let rate: Double
    /// The sweep's frames, and the silence after it.
    public let sweepFrames: Int
    /// The silence after the sweep, frames.
    public let tailFrames: Int
    /// The raised-cosine fade in, frames.
    public let fadeInFrames: Int
    /// The raised-cosine fade out, frames.
    public let fadeOutFrames: Int

    /// A sweep of about `seconds` (made a whole number of the synchronized
    /// rate's steps), then `tailSeconds` of silence.
    public init(startFrequency: Double = 20, endFrequency: Double = 20_000, seconds: Double = 5, levelDBFS: Double = -6,
                sampleRate: Int, tailSeconds: Double = 1, fadeInSeconds: Double = 0.02, fadeOutSeconds: Double = 0.005) {
        self.sampleRate = sampleRate
        self.startFrequency = startFrequency
        self.endFrequency = endFrequency
        self.levelDBFS = levelDBFS
        let span = log(endFrequency / startFrequency)
        rate = max(1, (startFrequency * seconds / span).rounded()) / startFrequency
        sweepFrames = Int((rate * span * Double(sampleRate)).rounded())
        tailFrames = Int(tailSeconds * Double(sampleRate))
        fadeInFrames = Int(fadeInSeconds * Double(sampleRate))
        fadeOutFrames = Int(fadeOutSeconds * Double(sampleRate))
    }

    /// The frames played: the sweep, then the silence.
    public var length: Int { sweepFrames + tailFrames }

    /// The seconds by which the k-th harmonic's response comes ahead of the linear one.
    public func harmonicAdvance(_ order: Int) -> Double { rate * log(Double(order)) }

    /// The samples played.
    public func samples() -> [Float] {
        let amplitude = pow(10, levelDBFS / 20)
        let rate = self.rate, start = startFrequency, sampleRate = Double(self.sampleRate)
        return (0..<length).map { n in
            guard n < sweepFrames else { return 0 }
            let t = Double(n) / sampleRate
            var gain = amplitude
            if n < fadeInFrames { gain *= 0.5 - 0.5 * cos(Double.pi * Double(n) / Double(fadeInFrames)) }
            let fromEnd = sweepFrames - 1 - n
            if fromEnd < fadeOutFrames { gain *= 0.5 - 0.5 * cos(Double.pi * Double(fromEnd) / Double(fadeOutFrames)) }
            return Float(gain * sin(2 * Double.pi * start * rate * (exp(t / rate) - 1)))
        }
    }
}
