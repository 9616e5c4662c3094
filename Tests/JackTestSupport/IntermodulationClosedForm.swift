import Foundation
import Measurement

/// What y = x + a2·x² + a3·x³ makes of two tones x = A1·sin(ω1 t) + A2·sin(ω2 t),
/// by the trigonometric identities: the tones as they come out, and each
/// intermodulation order as `IntermodulationAnalysis` counts it.
public struct IntermodulationClosedForm {
    public let test: IntermodulationTest
    public let a2: Double, a3: Double
    public let levelDBFS: Double

    public init(test: IntermodulationTest, a2: Double, a3: Double, levelDBFS: Double) {
        self.test = test
        self.a2 = a2
        self.a3 = a3
        self.levelDBFS = levelDBFS
    }

    public var amplitudes: (low: Double, high: Double) { IntermodulationMeasurement.amplitudes(test, levelDBFS: levelDBFS) }

    /// The low and the high tone out: A + a3·(¾A³ + 3/2·A·B²), B the other tone.
    public var tones: (low: Double, high: Double) {
        let (l, h) = amplitudes
        return (l + a3 * (0.75 * l * l * l + 1.5 * l * h * h), h + a3 * (0.75 * h * h * h + 1.5 * h * l * l))
    }

    /// Each order's ratio: sidebands f2 ± f1 are a2·A1·A2 each, f2 ± 2f1 ¾·a3·A1²·A2 each, f2 ± 3f1 none;
    /// f2 − f1 (two tones) a2·A1·A2, 2f1 − f2 ¾·a3·A1²·A2, 2f2 − f1 ¾·a3·A1·A2².
    public var orders: [Int: Double] {
        let (l, h) = amplitudes
        let out = tones
        if test.countsSidebands {
            return [2: 2 * a2 * l * h / out.high, 3: 2 * 0.75 * a3 * l * l * h / out.high, 4: 0]
        }
        let sum = out.low + out.high
        return [2: a2 * l * h / sum, 3: (0.75 * a3 * l * l * h + 0.75 * a3 * l * h * h) / sum]
    }

    public var dB: Double { 20 * log10(orders.values.reduce(0) { $0 + $1 * $1 }.squareRoot()) }
}
