import Foundation

/// The multi-tone test signal of the round-trip latency measurement, and the
/// phase analysis that turns a captured window of it into a delay.
///
/// Every tone sits exactly on a bin of an `windowFrames`-point DFT, so the
/// signal repeats every `windowFrames` frames, a window of that length holds
/// whole cycles of every tone, and the tones do not leak into each other.
/// A delay of `d` frames turns tone `m` by `-2π·m·d/N`:
///
/// * the main tone (bin N/16, 3 kHz at 48 kHz) gives `d` modulo 16 frames with
///   fine resolution;
/// * ten companion tones at bins `N/16 + 2^j` (j = 0…9) give, through their
///   phase *differences* with the main tone, `d` modulo `N/2^j` — from the whole
///   window (j = 0) down to 32 frames (j = 9). Differences are blind to
///   polarity and to any constant phase shift of the path, and all tones stay
///   in one octave of the band, where audio interfaces are flat;
/// * resolving from the coarsest difference down to the main tone picks the one
///   delay consistent with all of them; polarity is the half-cycle of the main
///   tone that the differences do not explain;
/// * the final delay is the mean of what every tone says, their spread a check.
///
/// The sent signal is a pure function of JACK frame time (`sample(at:)`), so
/// the analysis needs only the frame time of a captured window, not a copy of
/// what was sent.
public struct MultiToneSignal: Sendable {
    /// Frames per analysis window and per repetition of the signal; delays
    /// are told apart modulo this.
    public static let windowFrames = 16384
    /// DFT bins of the tones; the first is the main tone.
    public let bins: [Int]
    /// Peak amplitude of each tone.
    public let toneAmplitude: Double
    /// Starting phase of each tone, radians (Schroeder's, to keep the crest low).
    public let phases: [Double]
    /// One repetition of the signal, as sent.
    public let table: [Float]

    /// The standard signal: eleven tones of amplitude 0.05 (−26 dBFS each,
    /// peak of the sum below 0.55).
    public init() {
        let main = Self.windowFrames / 16
        bins = [main] + (0...9).map { main + (1 << $0) }
        toneAmplitude = 0.05
        let count = Double(bins.count)
        phases = bins.indices.map { Double.pi * Double($0 * $0) / count }
        let n = Double(Self.windowFrames)
        var table = [Float](repeating: 0, count: Self.windowFrames)
        for frame in 0..<Self.windowFrames {
            var sum = 0.0
            for (bin, phase) in zip(bins, phases) {
                // (bin·frame) mod N keeps the argument small and exact.
                sum += sin(2 * .pi * Double((bin * frame) % Self.windowFrames) / n + phase)
            }
            table[frame] = Float(toneAmplitude * sum)
        }
        self.table = table
    }

    /// The sample sent at JACK frame time `frame` (N divides 2³², so frame
    /// time wrapping around keeps the signal continuous).
    public func sample(at frame: UInt32) -> Float {
        table[Int(frame & UInt32(Self.windowFrames - 1))]
    }

    /// What a window says about the delay of the path it came through.
    public struct Estimate: Sendable, Equatable {
        /// Delay, frames, in [0, N); nil when the window does not allow one.
        public var delayFrames: Double?
        /// The path inverts the signal.
        public var inverted: Bool
        /// Level of the weakest tone as received, dBFS (peak of a sine).
        public var weakestToneDBFS: Double
        /// Largest minus smallest delay among the tones, frames.
        public var toneSpreadFrames: Double?
        /// Why there is no delay.
        public var problem: LatencyProblem?
    }

    /// Tones weaker than this (40 dB below what was sent) are not trusted.
    public var minimumToneAmplitude: Double { toneAmplitude * 0.01 }

    /// Analyses `window` (exactly `windowFrames` captured samples), whose
    /// first sample was captured at JACK frame time `startFrame`.
    public func estimate(window: UnsafeBufferPointer<Float>, startFrame: UInt32) -> Estimate {
        precondition(window.count == Self.windowFrames, "a window is \(Self.windowFrames) frames")
        let n = Self.windowFrames
        let twoPi = 2 * Double.pi
        var phase = [Double](repeating: 0, count: bins.count)
        var amplitude = [Double](repeating: 0, count: bins.count)
        var totalEnergy = 0.0
        for sample in window { totalEnergy += Double(sample) * Double(sample) }
        for (k, bin) in bins.enumerated() {
            var re = 0.0, im = 0.0
            for index in 0..<n {
                let angle = twoPi * Double((bin * index) % n) / Double(n)
                let value = Double(window[index])
                re += value * cos(angle)
                im -= value * sin(angle)
            }
            amplitude[k] = 2 * (re * re + im * im).squareRoot() / Double(n)
            // Undo the tone's own phase at the window's start: what remains is
            // -2π·bin·d/N (plus π if the path inverts).
            let startTurn = Double((bin * Int(startFrame & UInt32(n - 1))) % n) / Double(n)
            phase[k] = atan2(im, re) + .pi / 2 - phases[k] - twoPi * startTurn
        }
        let weakest = amplitude.min() ?? 0
        let weakestDB = 20 * log10(max(weakest, 1e-12))
        var result = Estimate(delayFrames: nil, inverted: false, weakestToneDBFS: weakestDB,
                              toneSpreadFrames: nil, problem: nil)
        guard weakest >= minimumToneAmplitude else {
            result.problem = .signalTooWeak
            return result
        }
        guard Self.longestSilence(in: window) < Self.dropoutFrames else {
            result.problem = .dropout
            return result
        }
        let toneEnergy = amplitude.reduce(0) { $0 + $1 * $1 / 2 } * Double(n)
        guard toneEnergy >= 0.5 * totalEnergy else {
            result.problem = .tooNoisy
            return result
        }

        // Coarse to fine through the differences with the main tone.
        var delay = Self.delay(ofTurn: phase[1] - phase[0], period: Double(n))
        for j in 1...9 {
            let period = Double(n >> j)
            let candidate = Self.nearest(Self.delay(ofTurn: phase[j + 1] - phase[0], period: period),
                                         period: period, to: delay)
            guard abs(candidate - delay) <= period / 4 else {
                result.problem = .unstable
                return result
            }
            delay = candidate
        }
        // The main tone, with and without inversion: the one nearer wins.
        let mainPeriod = Double(n) / Double(bins[0])
        let upright = Self.nearest(Self.delay(ofTurn: phase[0], period: mainPeriod), period: mainPeriod, to: delay)
        let flipped = Self.nearest(Self.delay(ofTurn: phase[0] - .pi, period: mainPeriod), period: mainPeriod, to: delay)
        let inverted = abs(flipped - delay) < abs(upright - delay)
        let chosen = inverted ? flipped : upright
        guard abs(chosen - delay) <= mainPeriod / 4 else {
            result.problem = .unstable
            return result
        }
        delay = chosen
        // Every tone's own reading, each resolved against the main tone's.
        let readings = bins.enumerated().map { k, bin -> Double in
            let period = Double(n) / Double(bin)
            return Self.nearest(Self.delay(ofTurn: phase[k] - (inverted ? .pi : 0), period: period),
                                period: period, to: delay)
        }
        let spread = (readings.max() ?? 0) - (readings.min() ?? 0)
        result.inverted = inverted
        result.toneSpreadFrames = spread
        guard spread <= 0.5 else {
            result.problem = .unstable
            return result
        }
        let mean = readings.reduce(0, +) / Double(readings.count)
        result.delayFrames = mean.truncatingRemainder(dividingBy: Double(n))
        if result.delayFrames! < 0 { result.delayFrames! += Double(n) }
        return result
    }

    /// Exact digital silence this long inside a window that carries the
    /// signal is a dropout: the signal never has it, and an analog path's
    /// noise never gives it. A period a server lost without an xrun (a
    /// netjack2 master's late cycle, PipeWire skipping a cycle) comes back so.
    static let dropoutFrames = 32

    /// The longest run of samples that are exactly 0 in `window`.
    static func longestSilence(in window: UnsafeBufferPointer<Float>) -> Int {
        var longest = 0, run = 0
        for sample in window {
            run = sample == 0 ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }

    /// The delay in [0, period) that turns a tone of that period by `turn`
    /// radians (a delay turns it backwards).
    static func delay(ofTurn turn: Double, period: Double) -> Double {
        var cycles = (-turn / (2 * .pi)).truncatingRemainder(dividingBy: 1)
        if cycles < 0 { cycles += 1 }
        return cycles * period
    }

    /// `value` plus the whole number of periods that brings it nearest to `target`.
    static func nearest(_ value: Double, period: Double, to target: Double) -> Double {
        value + ((target - value) / period).rounded() * period
    }
}

/// Why a window gave no delay.
public enum LatencyProblem: String, Sendable, Codable, Equatable {
    /// The tones came back more than 40 dB below what was sent, or not at all.
    case signalTooWeak = "signal too weak"
    /// Less than half of what came back is the test signal.
    case tooNoisy = "too noisy"
    /// The tones disagree about the delay (a changing or non-linear path).
    case unstable
    /// An xrun or a gap in the captured frames fell in the window.
    case xrun
    /// The signal stopped inside the window (digital silence where it was
    /// due): a period the server lost without saying so.
    case dropout
}
