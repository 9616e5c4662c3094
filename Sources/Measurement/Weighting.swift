import Foundation

/// A frequency weighting for noise figures, as the standards define its
/// response (the analogue network's magnitude, applied exactly to each
/// bin of a spectrum, so no digital filter's warping near half the sample
/// rate): every weighted figure is the root-sum-square of the weighted bins
/// in the band (20 Hz to 20 kHz), read with an RMS detector.
public enum Weighting: String, Sendable, CaseIterable, Codable {
    /// No weighting: the band alone.
    case unweighted
    /// A-weighting, IEC 61672-1 (poles at 20.6, 107.7, 737.9 and 12194 Hz; 0 dB at 1 kHz).
    case a
    /// C-weighting, IEC 61672-1 (poles at 20.6 and 12194 Hz; 0 dB at 1 kHz).
    case c
    /// CCIR-RMS: ITU-R BS.468's curve less 5.63 dB (0 dB near 2 kHz), with an
    /// RMS detector instead of 468's quasi-peak one (AES17's and Dolby's use).
    case ccirRMS = "ccir_rms"

    /// The weighting's gain at `frequency` (Hz), dB.
    public func gainDB(at frequency: Double) -> Double {
        switch self {
        case .unweighted: return 0
        case .a: return 20 * log10(Self.aResponse(frequency) / Self.aResponse(1000))
        case .c: return 20 * log10(Self.cResponse(frequency) / Self.cResponse(1000))
        case .ccirRMS: return Self.itu468DB(at: frequency) - 5.63
        }
    }

    /// How the output names it.
    public var definition: String {
        switch self {
        case .unweighted: return "unweighted, 20 Hz-20 kHz, RMS"
        case .a: return "A-weighted (IEC 61672-1), 20 Hz-20 kHz, RMS"
        case .c: return "C-weighted (IEC 61672-1), 20 Hz-20 kHz, RMS"
        case .ccirRMS: return "CCIR-RMS: ITU-R BS.468 curve - 5.63 dB, 20 Hz-20 kHz, RMS detector (not 468's quasi-peak)"
        }
    }

    // IEC 61672-1's pole frequencies, Hz (its equations E.1 to E.6).
    private static let f1 = 20.598997, f2 = 107.65265, f3 = 737.86223, f4 = 12194.217

    private static func cResponse(_ f: Double) -> Double {
        let fSquared = f * f
        return f4 * f4 * fSquared / ((fSquared + f1 * f1) * (fSquared + f4 * f4))
    }

    private static func aResponse(_ f: Double) -> Double {
        let fSquared = f * f
        return cResponse(f) * fSquared / ((fSquared + f2 * f2) * (fSquared + f3 * f3)).squareRoot()
    }

    /// ITU-R BS.468's weighting curve at `frequency` (Hz), dB: the response
    /// of the standard's network, 0 dB at 1 kHz (+12.2 dB at 6.3 kHz).
    public static func itu468DB(at frequency: Double) -> Double {
        20 * log10(itu468Response(frequency) / itu468Response(1000))
    }

    private static func itu468Response(_ f: Double) -> Double {
        let h1 = -4.737338981378384e-24 * pow(f, 6) + 2.043828333606125e-15 * pow(f, 4) - 1.363894795463638e-7 * f * f + 1
        let h2 = 1.306612257412824e-19 * pow(f, 5) - 2.118150887518656e-11 * pow(f, 3) + 5.559488023498642e-4 * f
        return 1.246332637532143e-4 * f / (h1 * h1 + h2 * h2).squareRoot()
    }
}
