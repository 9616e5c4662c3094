import Foundation

/// A sine for a stepped-sine measurement, on a bin of the analysis block:
/// its frequency is a whole number of cycles per block, so the block holds
/// the tone and every harmonic exactly on their bins (coherent sampling:
/// no window, no leakage, nothing of the tone outside its bin). With the
/// default block of one second the bins are 1 Hz apart and 997 Hz is exact;
/// 997 shares no factor with 44.1 or 48 kHz, so the tone visits every
/// sample phase.
public struct SineStimulus: Sendable, Equatable {
    /// Hz.
    public let sampleRate: Int
    /// The analysis block, samples (even).
    public let blockLength: Int
    /// The tone's bin in the block: cycles per block.
    public let bin: Int
    /// The level, dBFS as AES17 counts it: a sine whose peaks reach full scale is 0 dBFS.
    public let levelDBFS: Double

    /// The tone nearest `frequency` (Hz) that fits the block, at `levelDBFS`.
    /// `blockLength` defaults to one second of samples (rounded up to even).
    public init(frequency: Double, levelDBFS: Double, sampleRate: Int, blockLength: Int? = nil) {
        self.sampleRate = sampleRate
        let length = blockLength ?? sampleRate + sampleRate % 2
        self.blockLength = length
        bin = max(1, min(length / 2 - 1, Int((frequency * Double(length) / Double(sampleRate)).rounded())))
        self.levelDBFS = levelDBFS
    }

    /// The frequency played, Hz (the bin's).
    public var frequency: Double { Double(bin) * Double(sampleRate) / Double(blockLength) }

    /// The peak amplitude, full scale 1.
    public var amplitude: Double { pow(10, levelDBFS / 20) }

    /// `count` samples of the tone from phase 0, the first `fadeIn` of them
    /// faded in on a raised cosine (a tone that starts at once splatters).
    public func samples(count: Int, fadeIn: Int = 0) -> [Float] {
        let amplitude = amplitude
        return (0..<count).map { n in
            // The phase from n·bin modulo the block, so it stays exact however long the tone.
            let phase = 2 * Double.pi * Double((n * bin) % blockLength) / Double(blockLength)
            let fade = n < fadeIn ? 0.5 - 0.5 * cos(Double.pi * Double(n) / Double(fadeIn)) : 1
            return Float(amplitude * fade * sin(phase))
        }
    }
}
