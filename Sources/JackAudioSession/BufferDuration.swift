import Foundation

/// How a preferred I/O buffer duration becomes a JACK period-size request.
public enum BufferDuration {
    /// The smallest period the session asks for, frames.
    public static let minimumFrames = 16
    /// The largest period the session asks for, frames.
    public static let maximumFrames = 4096

    /// The period to request for `seconds` at `sampleRate` Hz: the power of two
    /// nearest to seconds × rate on a logarithmic scale, within 16…4096 frames.
    public static func periodFrames(forDuration seconds: Double, sampleRate: Int) -> Int {
        let frames = seconds * Double(sampleRate)
        guard frames.isFinite, frames > 0 else { return minimumFrames }
        let exponent = Int(log2(frames).rounded())
        let clamped = min(max(exponent, 4), 12)
        return 1 << clamped
    }
}
