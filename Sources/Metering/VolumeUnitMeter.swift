import Foundation

/// A VU meter of IEC 60268-17: the full-wave rectified signal drives a
/// second-order movement that, on a tone suddenly applied at the reference
/// level, reaches 99 % of its reading in 300 ms and overshoots by 1 to 1.5 %
/// (here 1.25 %). It reads the rectified average scaled so that a sine reads
/// its RMS; 0 VU is a sine at `referenceDBFS` (AES17: a full-scale sine is 0 dBFS).
public struct VolumeUnitMeter: Sendable {
    /// The level of a sine that reads 0 VU, dBFS.
    public let referenceDBFS: Double
    let omega: Double
    let damping: Double
    let step: Double
    private var position = 0.0
    private var velocity = 0.0
    /// The rectified average of a full-scale sine times this is its RMS.
    static let sineScale = Double.pi / (2 * 2.0.squareRoot())
    static let overshoot = 0.0125

    /// A VU meter at `sampleRate` reading 0 VU for a sine at `referenceDBFS`.
    public init(sampleRate: Int, referenceDBFS: Double = -18) {
        self.referenceDBFS = referenceDBFS
        let logOvershoot = log(Self.overshoot)
        damping = -logOvershoot / (Double.pi * Double.pi + logOvershoot * logOvershoot).squareRoot()
        step = 1 / Double(sampleRate)
        omega = Self.calibratedOmega(damping: damping, sampleRate: sampleRate)
    }

    private init(omega: Double, damping: Double, sampleRate: Int) {
        referenceDBFS = 0
        self.omega = omega
        self.damping = damping
        step = 1 / Double(sampleRate)
    }

    /// Feeds one sample.
    @inline(__always)
    public mutating func process(_ sample: Float) {
        let drive = Double(abs(sample)) * Self.sineScale
        // Semi-implicit Euler on y'' + 2ζω y' + ω² y = ω² u: stable at audio rates.
        velocity += (omega * omega * (drive - position) - 2 * damping * omega * velocity) * step
        position += velocity * step
    }

    /// The reading, VU (dB relative to the reference); −∞ at rest.
    public var reading: Double {
        position > 0 ? 20 * log10(position / (pow(10, referenceDBFS / 20) / 2.0.squareRoot())) : -.infinity
    }

    /// The natural frequency at which a 1 kHz tone first reaches 99 % of its
    /// steady reading 300 ms after it starts (bisection on the simulated movement).
    static func calibratedOmega(damping: Double, sampleRate: Int) -> Double {
        let phaseStep = 2 * Double.pi * 1000 / Double(sampleRate)
        let tone = (0..<sampleRate).map { Float(sin(phaseStep * Double($0))) }
        func riseTime(_ omega: Double) -> Double {
            var meter = VolumeUnitMeter(omega: omega, damping: damping, sampleRate: sampleRate)
            let steady = 1 / 2.0.squareRoot()
            for (n, sample) in tone.enumerated() {
                meter.process(sample)
                if meter.position >= 0.99 * steady { return Double(n) / Double(sampleRate) }
            }
            return 1
        }
        var low = 1.0, high = 200.0
        for _ in 0..<40 {
            let omega = (low + high) / 2
            if riseTime(omega) > 0.3 { low = omega } else { high = omega }
        }
        return (low + high) / 2
    }
}
