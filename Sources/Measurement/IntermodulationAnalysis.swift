import Foundation

/// An intermodulation test as its standard sets it up: two tones, their
/// amplitude ratio, and how the products are counted.
public enum IntermodulationTest: String, Sendable, CaseIterable, Codable {
    /// SMPTE RP120: 60 Hz and 7 kHz, 4:1.
    case smpte
    /// DIN 45403: 250 Hz and 8 kHz, 4:1.
    case din
    /// CCIF (ITU-R) difference frequency: 19 kHz and 20 kHz, equal.
    case ccif

    /// The low and the high tone, Hz.
    public var lowFrequency: Double {
        switch self {
        case .smpte: return 60
        case .din: return 250
        case .ccif: return 19_000
        }
    }

    /// The high tone, Hz.
    public var highFrequency: Double {
        switch self {
        case .smpte: return 7_000
        case .din: return 8_000
        case .ccif: return 20_000
        }
    }

    /// The low tone's amplitude against the high tone's.
    public var amplitudeRatio: Double { self == .ccif ? 1 : 4 }

    /// Whether the products are the high tone's sidebands (modulation
    /// distortion), or difference tones of two equal tones.
    public var countsSidebands: Bool { self != .ccif }

    /// How the figure is counted, as the output says.
    public var definition: String {
        switch self {
        case .smpte, .din:
            return "IEC 60268-3 modulation distortion: for orders n = 2 to 4 the sidebands at f2 ± (n-1)·f1, each pair "
                + "summed, relative to f2; the orders root-sum-square (the AM an RP120/DIN 45403 demodulator reads)"
        case .ccif:
            return "IEC 60268-3 difference-frequency distortion: d2 = f2-f1, d3 = 2f1-f2 plus 2f2-f1, each relative to "
                + "the sum of the two tones; the figure is d2 and d3 root-sum-square"
        }
    }
}

/// What a coherent block of a two-tone capture holds: the two tones and
/// the intermodulation products a test counts (`IntermodulationTest`).
/// Pure. Every tone and product is on a bin (1 Hz bins of a one-second
/// block), so no window is used, as in `HarmonicAnalysis`.
public struct IntermodulationAnalysis: Sendable, Equatable {
    /// One product.
    public struct Product: Sendable, Equatable {
        /// Its order (2: f2 ± f1; 3: f2 ± 2f1, 2f1 − f2, 2f2 − f1; ...).
        public let order: Int
        /// The product's frequency, Hz.
        public let frequency: Double
        /// Relative to what the test counts against (the high tone; or the two tones' sum), dB.
        public let levelDB: Double
    }

    /// The test whose tones and counting were used.
    public let test: IntermodulationTest
    /// The low and the high tone as they came back, dBFS.
    public let lowToneDBFS: Double
    /// The high tone as it came back, dBFS.
    public let highToneDBFS: Double
    /// The distortion of each order as a ratio (2: d2, ...).
    public let orders: [Int: Double]
    /// Every product counted, with its level.
    public let products: [Product]

    /// The figure: the orders root-sum-square, as a ratio of amplitudes.
    public var ratio: Double { orders.values.reduce(0) { $0 + $1 * $1 }.squareRoot() }
    /// The figure, dB.
    public var dB: Double { 20 * log10(ratio) }
    /// The figure, percent.
    public var percent: Double { ratio * 100 }

    /// The analysis of `block` (exactly `fft.length` samples, one second at `sampleRate`).
    public static func analyse(_ block: ArraySlice<Float>, sampleRate: Int, test: IntermodulationTest,
                               fft: RealFFT) -> IntermodulationAnalysis {
        let spectrum = fft.spectrum(block)
        let binWidth = Double(sampleRate) / Double(fft.length)
        func amplitude(_ frequency: Double) -> Double {
            let bin = Int((frequency / binWidth).rounded())
            guard bin > 0, bin < spectrum.count else { return 0 }
            return (spectrum[bin].re * spectrum[bin].re + spectrum[bin].im * spectrum[bin].im).squareRoot()
        }
        let (f1, f2) = (test.lowFrequency, test.highFrequency)
        let (low, high) = (amplitude(f1), amplitude(f2))
        var orders: [Int: Double] = [:]
        var products: [Product] = []
        func count(_ order: Int, _ frequencies: [Double], against reference: Double) {
            let levels = frequencies.map(amplitude)
            orders[order] = levels.reduce(0, +) / reference
            for (frequency, level) in zip(frequencies, levels) {
                products.append(Product(order: order, frequency: frequency, levelDB: 20 * log10(level / reference)))
            }
        }
        if test.countsSidebands {
            for order in 2...4 {
                let offset = Double(order - 1) * f1
                count(order, [f2 - offset, f2 + offset], against: high)
            }
        } else {
            count(2, [f2 - f1], against: low + high)
            count(3, [2 * f1 - f2, 2 * f2 - f1].filter { $0 < Double(sampleRate) / 2 }, against: low + high)
        }
        return IntermodulationAnalysis(test: test, lowToneDBFS: 20 * log10(low), highToneDBFS: 20 * log10(high),
                                       orders: orders, products: products)
    }
}
