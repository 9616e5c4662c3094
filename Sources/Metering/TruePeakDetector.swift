import Foundation

/// True peak by ITU-R BS.1770-4 Annex 2: each channel is oversampled (4× below
/// 96 kHz, 2× below 192 kHz, not at all above) with a 49-tap Hann-windowed sinc
/// interpolator (the design libebur128 uses), and the largest magnitude of the
/// interpolated signal is the true peak. Written here because the per-sample
/// scalar loop in libebur128 was a third of `jas meter`'s time: this one
/// filters a whole chunk per tap, which the compiler vectorises.
public struct TruePeakDetector {
    /// Channels in each chunk fed to it.
    public let channels: Int
    let factor: Int
    /// Per phase, the non-zero taps: coefficient and how many input samples back it reaches.
    private let phases: [[(coefficient: Float, delay: Int)]]
    /// The last `historyCount` input samples of each channel, oldest first.
    private var history: [[Float]]
    private let historyCount: Int
    private var input: [Float] = []
    private var output: [Float] = []
    /// Per channel, the largest magnitude of a chunk (`highestPeak`).
    private var loudest: [Float] = []
    /// Input samples still to come whose interpolation would reach back before
    /// the first one (see `joinsMidStream`); for them the sample itself counts.
    private var settling: Int
    /// The most an interpolated sample can be for an input whose largest
    /// magnitude is 1: the largest sum of one phase's coefficients'
    /// magnitudes, with a margin for Float rounding.
    private let gain: Float
    static let taps = 49

    /// `joinsMidStream`: the signal began before the first sample (a live
    /// meter starting in the middle of a programme), so the silence the
    /// interpolator holds at the start is not part of it and a step out of it
    /// is not a peak; false for a file, which begins where its signal does.
    public init(channels: Int, sampleRate: Int, joinsMidStream: Bool = false) {
        self.channels = channels
        factor = sampleRate < 96000 ? 4 : (sampleRate < 192000 ? 2 : 1)
        var phases = Array(repeating: [(coefficient: Float, delay: Int)](), count: factor)
        for tap in 0..<Self.taps {
            let offset = Double(tap - (Self.taps - 1) / 2)
            var value = offset == 0 ? 1 : sin(offset * .pi / Double(factor)) / (offset * .pi / Double(factor))
            value *= 0.5 * (1 - cos(2 * .pi * Double(tap) / Double(Self.taps - 1)))
            if abs(value) > 1e-10 { phases[tap % factor].append((Float(value), tap / factor)) }
        }
        self.phases = phases
        gain = Float(phases.map { $0.reduce(0) { $0 + Double(abs($1.coefficient)) } }.max() ?? 1) * (1 + 1e-4)
        historyCount = phases.joined().map(\.delay).max() ?? 0
        history = Array(repeating: Array(repeating: 0, count: historyCount), count: channels)
        settling = joinsMidStream ? historyCount : 0
    }

    /// The true peak (linear) of each channel over `frames` interleaved frames.
    public mutating func peaks(_ samples: UnsafePointer<Float>, frames: Int) -> [Double] {
        guard frames > 0 else { return Array(repeating: 0, count: channels) }
        let result = (0..<channels).map { Double(peak(ofChannel: $0, samples, frames: frames)) }
        settling -= min(settling, frames)
        return result
    }

    /// The highest true peak (linear) over every channel of `frames`
    /// interleaved frames if it is above `floor`; `floor` or less if it is
    /// not. What the highest peak of a whole file needs: a channel whose
    /// samples here (and in the interpolator's reach before them), times the
    /// interpolator's largest gain, stay at or under the highest peak so far
    /// cannot pass it, and is not interpolated (the same result, without the
    /// filter's work for most of a programme that has had its loudest moment).
    public mutating func highestPeak(_ samples: UnsafePointer<Float>, frames: Int, above floor: Double) -> Double {
        guard frames > 0 else { return 0 }
        // Every channel's largest magnitude, in one pass over the frames as they lie.
        if loudest.count < channels { loudest = Array(repeating: 0, count: channels) }
        loudest.withUnsafeMutableBufferPointer { loudest in
            Self.largestMagnitudes(samples, frames: frames, channels: channels, into: loudest.baseAddress!)
        }
        var highest: Float = 0
        for channel in 0..<channels {
            let reach = history[channel].reduce(loudest[channel]) { max($0, abs($1)) }
            if reach * gain <= Float(floor) {
                keepHistory(ofChannel: channel, samples, frames: frames)
            } else {
                highest = max(highest, peak(ofChannel: channel, samples, frames: frames))
            }
        }
        settling -= min(settling, frames)
        return Double(highest)
    }

    /// Each channel's largest magnitude over `frames` interleaved frames, into
    /// `loudest`: eight channels at a time in vector registers (the scalar
    /// loop it replaced was not vectorised: 4 % of `jas record`'s CPU at 64
    /// channels), the rest one by one. A NaN is passed over, as `max` did.
    static func largestMagnitudes(_ samples: UnsafePointer<Float>, frames: Int, channels: Int,
                                  into loudest: UnsafeMutablePointer<Float>) {
        loudest.update(repeating: 0, count: channels)
        let magnitude = SIMD8<UInt32>(repeating: 0x7FFF_FFFF)
        let raw = UnsafeRawPointer(samples)
        let groups = channels / 8 * 8
        var row = 0
        for _ in 0..<frames {
            var channel = 0
            while channel < groups {
                let bits = raw.loadUnaligned(fromByteOffset: (row + channel) * 4, as: SIMD8<UInt32>.self) & magnitude
                let value = unsafeBitCast(bits, to: SIMD8<Float>.self)
                let slot = UnsafeMutableRawPointer(loudest + channel)
                var largest = slot.loadUnaligned(as: SIMD8<Float>.self)
                largest.replace(with: value, where: value .> largest)
                slot.storeBytes(of: largest, as: SIMD8<Float>.self)
                channel += 8
            }
            while channel < channels {
                let value = abs(samples[row + channel])
                if value > loudest[channel] { loudest[channel] = value }
                channel += 1
            }
            row += channels
        }
    }

    /// One channel's true peak over `frames` frames; keeps the channel's history.
    private mutating func peak(ofChannel channel: Int, _ samples: UnsafePointer<Float>, frames: Int) -> Float {
        let span = historyCount + frames
        if input.count < span { input = Array(repeating: 0, count: span) }
        if output.count < frames { output = Array(repeating: 0, count: frames) }
        // The channel's samples after its history, in one run.
        input.withUnsafeMutableBufferPointer { x in
            for index in 0..<historyCount { x[index] = history[channel][index] }
            for frame in 0..<frames { x[historyCount + frame] = samples[frame * channels + channel] }
        }
        let settling = settling
        var peak: Float = 0
        input.withUnsafeBufferPointer { x in
            output.withUnsafeMutableBufferPointer { y in
                for phase in phases {
                    for frame in 0..<frames { y[frame] = 0 }
                    for (coefficient, delay) in phase {
                        let source = x.baseAddress! + historyCount - delay
                        for frame in 0..<frames { y[frame] += coefficient * source[frame] }
                    }
                    for frame in min(settling, frames)..<frames { peak = max(peak, abs(y[frame])) }
                }
                for frame in 0..<min(settling, frames) { peak = max(peak, abs(x[historyCount + frame])) }
            }
        }
        for index in 0..<historyCount { history[channel][index] = input[frames + index] }
        return peak
    }

    /// Keeps the channel's last `historyCount` samples, without filtering.
    private mutating func keepHistory(ofChannel channel: Int, _ samples: UnsafePointer<Float>, frames: Int) {
        let kept = max(0, historyCount - frames)
        for index in 0..<kept { history[channel][index] = history[channel][index + frames] }
        for index in kept..<historyCount {
            history[channel][index] = samples[(frames - historyCount + index) * channels + channel]
        }
    }
}
