import Foundation

/// A quasi-peak programme meter of IEC 60268-10: the rectified signal charges
/// the reading with a short attack, and the reading falls at a constant rate
/// in dB. Type I (DIN 45406): integration time 5 ms (a 5 ms tone burst reads
/// 2 dB below the steady tone), return 20 dB in 1.7 s. Type IIb (EBU): 10 ms
/// (a 10 ms burst reads 4 dB below), return 24 dB in 2.8 s. The attack time
/// constant is found at start-up by running the defining burst (5 kHz) through
/// the meter itself, for the sample rate in use; the scale is set so that a
/// steady 1 kHz tone reads its peak level.
public struct PeakProgrammeMeter: Sendable {
    /// The meter types.
    public enum Kind: String, Sendable, CaseIterable {
        /// IEC 60268-10 type I (DIN 45406): 5 ms integration, falls 20 dB in 1.7 s.
        case typeI = "I"
        /// IEC 60268-10 type IIb (EBU): 10 ms integration, falls 24 dB in 2.8 s.
        case typeIIb = "IIb"

        /// The burst that defines the integration time, seconds, and its reading, dB.
        var definingBurst: (seconds: Double, readingDB: Double) {
            self == .typeI ? (0.005, -2) : (0.010, -4)
        }

        /// The return: how far the reading falls, dB, in how long, seconds.
        var fall: (decibels: Double, seconds: Double) {
            self == .typeI ? (20, 1.7) : (24, 2.8)
        }
    }

    /// The meter type.
    public let kind: Kind
    let attack: Float
    let release: Float
    /// Scales the detector so that a steady 1 kHz tone reads its peak level.
    let gain: Float
    /// The reading, linear (1 = a full-scale sine's peak).
    public private(set) var level: Float = 0

    /// A meter of `kind` at `sampleRate`.
    public init(kind: Kind, sampleRate: Int) {
        self.kind = kind
        let fall = kind.fall
        release = Float(pow(10, -fall.decibels / 20 / (fall.seconds * Double(sampleRate))))
        attack = Self.calibratedAttack(kind: kind, sampleRate: sampleRate, release: release)
        let uncalibrated = PeakProgrammeMeter(kind: kind, attack: attack, release: release, gain: 1)
        gain = Float(1 / uncalibrated.highestReading(frequency: 1000, seconds: 0.5, sampleRate: sampleRate))
    }

    private init(kind: Kind, attack: Float, release: Float, gain: Float) {
        self.kind = kind
        self.attack = attack
        self.release = release
        self.gain = gain
    }

    /// Feeds one sample.
    @inline(__always)
    public mutating func process(_ sample: Float) {
        let rectified = abs(sample)
        if rectified > level {
            level += (rectified - level) * attack
        } else {
            level *= release
        }
    }

    /// The reading, dBFS (−∞ for silence).
    public var decibels: Double { level > 0 ? 20 * log10(Double(level * gain)) : -.infinity }

    /// The highest detector level a full-scale sine of `frequency` reaches in `seconds`.
    func highestReading(frequency: Double, seconds: Double, sampleRate: Int) -> Double {
        highestReading(Self.tone(frequency: frequency, seconds: seconds, sampleRate: sampleRate)[...])
    }

    /// The highest detector level `samples` drive it to.
    func highestReading(_ samples: ArraySlice<Float>) -> Double {
        var meter = self
        var highest: Float = 0
        for sample in samples {
            meter.process(sample)
            highest = max(highest, meter.level)
        }
        return Double(highest)
    }

    static func tone(frequency: Double, seconds: Double, sampleRate: Int) -> [Float] {
        let step = 2 * Double.pi * frequency / Double(sampleRate)
        return (0..<Int(seconds * Double(sampleRate))).map { Float(sin(step * Double($0))) }
    }

    /// The attack coefficient at which the defining burst reads what it must:
    /// bisection on the time constant, the meter simulated on a 5 kHz tone.
    static func calibratedAttack(kind: Kind, sampleRate: Int, release: Float) -> Float {
        let burst = kind.definingBurst
        let target = pow(10, burst.readingDB / 20)
        func coefficient(_ tau: Double) -> Float { Float(1 - exp(-1 / (tau * Double(sampleRate)))) }
        // One 5 kHz tone for every trial: its first samples are the burst.
        let tone = Self.tone(frequency: 5000, seconds: 0.5, sampleRate: sampleRate)
        func reading(_ tau: Double, seconds: Double) -> Double {
            PeakProgrammeMeter(kind: kind, attack: coefficient(tau), release: release, gain: 1)
                .highestReading(tone[0..<min(tone.count, Int(seconds * Double(sampleRate)))])
        }

        var low = 1e-5, high = 0.1
        for _ in 0..<40 {
            let tau = (low + high) / 2
            let ratio = reading(tau, seconds: burst.seconds) / reading(tau, seconds: 0.5)
            if ratio > target { low = tau } else { high = tau }
        }
        return coefficient((low + high) / 2)
    }
}
