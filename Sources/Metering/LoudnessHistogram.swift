import Foundation

/// Integrated loudness (BS.1770-4) and loudness range (EBU Tech 3342) of a
/// stretch of time, from the meter's 400 ms blocks and 3 s windows as its
/// readings give them: each reading's momentary loudness is the 400 ms
/// block ending there (readings every 100 ms are BS.1770's blocks with 75 %
/// overlap), and the short-term loudness of every whole second of audio the
/// 3 s windows of the loudness range (a hop of 1 s, as libebur128 takes
/// them: the meter's own range, in every file's `bext` too). Kept as histograms of
/// 0.1 LU bins from the −70 LUFS gate up (each bin with its count and its
/// blocks' summed power), as libebur128's histogram mode keeps them: the
/// size is the same for an hour or a year.
public struct LoudnessHistogram: Sendable, Equatable {
    static let lowest = -70.0, highest = 10.0, binLU = 0.1
    static let bins = Int((highest - lowest) / binLU)
    private var blockCounts = [Int](repeating: 0, count: bins)
    private var blockPowers = [Double](repeating: 0, count: bins)
    private var windowCounts = [Int](repeating: 0, count: bins)
    private var windowPowers = [Double](repeating: 0, count: bins)

    /// An empty histogram.
    public init() {}

    /// Adds a 400 ms block and a 3 s window (nil or below the gate: none).
    public mutating func add(momentaryLUFS: Double?, shortTermLUFS: Double?) {
        if let momentary = momentaryLUFS, let bin = Self.bin(momentary) {
            blockCounts[bin] += 1
            blockPowers[bin] += Self.power(momentary)
        }
        if let shortTerm = shortTermLUFS, let bin = Self.bin(shortTerm) {
            windowCounts[bin] += 1
            windowPowers[bin] += Self.power(shortTerm)
        }
    }

    /// Integrated loudness: the blocks above the absolute gate, then those
    /// above the relative gate 10 LU under their mean. Nil: none passed.
    public var integratedLUFS: Double? {
        guard let ungated = Self.mean(blockCounts, blockPowers, from: 0) else { return nil }
        let relative = Self.loudness(ungated) - 10
        return Self.mean(blockCounts, blockPowers, from: Self.firstBin(above: relative)).map(Self.loudness)
    }

    /// Loudness range: the short-term windows above the absolute gate and the
    /// relative gate 20 LU under their mean, from their 10th to their 95th percentile. Nil: none.
    public var loudnessRangeLU: Double? {
        guard let ungated = Self.mean(windowCounts, windowPowers, from: 0) else { return nil }
        let first = Self.firstBin(above: Self.loudness(ungated) - 20)
        let total = windowCounts[first...].reduce(0, +)
        guard total > 0 else { return nil }
        func percentile(_ fraction: Double) -> Double {
            let rank = Int((Double(total - 1) * fraction).rounded(.down))
            var seen = 0
            for bin in first..<Self.bins {
                seen += windowCounts[bin]
                if seen > rank { return Self.lowest + (Double(bin) + 0.5) * Self.binLU }
            }
            return Self.highest
        }
        return percentile(0.95) - percentile(0.10)
    }

    private static func bin(_ lufs: Double) -> Int? {
        guard lufs.isFinite, lufs >= lowest else { return nil }
        return min(bins - 1, Int((lufs - lowest) / binLU))
    }

    private static func firstBin(above lufs: Double) -> Int {
        max(0, min(bins, Int(((lufs - lowest) / binLU).rounded(.up))))
    }

    private static func power(_ lufs: Double) -> Double { pow(10, (lufs + 0.691) / 10) }
    private static func loudness(_ power: Double) -> Double { -0.691 + 10 * log10(power) }

    private static func mean(_ counts: [Int], _ powers: [Double], from first: Int) -> Double? {
        guard first < bins else { return nil }
        let count = counts[first...].reduce(0, +)
        return count > 0 ? powers[first...].reduce(0, +) / Double(count) : nil
    }
}
