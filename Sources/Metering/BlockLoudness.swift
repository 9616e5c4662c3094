import Foundation

/// A programme's loudness by ITU-R BS.1770-4 and EBU Tech 3341/3342 (integrated
/// loudness, loudness range, highest momentary and short-term loudness),
/// computed from 100 ms blocks of K-weighted energy: each sample is filtered
/// and squared once, and every window the standards use is a mean of
/// consecutive blocks (a 400 ms gating block or momentary window of 4, a 3 s
/// short-term window of 30). libebur128 keeps every filtered sample and sums
/// each window again from them: for a 64-channel recording that was eight
/// reads of every sample, 40 % of `jas record`'s CPU (BENCHMARKS.md).
///
/// Every channel counts with weight 1 (no loudspeaker layout), as the files
/// a recorder writes are metered. The figures follow libebur128's
/// definitions, which `jas meter` reads through (`ProgrammeLoudness`):
/// gating blocks every 100 ms from 400 ms on, short-term blocks for the range
/// every second from 3 s on, the same gates and percentiles; the tests hold
/// the two to a thousandth of a loudness unit. Not real-time code, not
/// thread-safe: one worker feeds it.
public struct BlockLoudness {
    /// Channels in each block fed to it.
    public let channels: Int
    /// Frames in a 100 ms block (libebur128's rounding).
    let blockFrames: Int
    private let filter: KWeighting
    /// Per channel: the two biquads' state, then the block's sum of squares.
    private var state: [Double]
    private var framesInBlock = 0
    /// Energy (mean square) of the last 30 blocks, newest at `(blocks - 1) % 30`; zero before the first.
    private var recent = [Double](repeating: 0, count: 30)
    private var blocks = 0
    /// Gating blocks (400 ms) and short-term blocks (3 s) above the absolute gate, as energies.
    private var gatingBlocks: [Double] = []
    private var shortTermBlocks: [Double] = []
    /// Highest momentary and short-term loudness at a block's end, LUFS.
    public private(set) var maxMomentaryLUFS: Double?
    /// Highest short-term loudness at a block's end, LUFS (nil: none above the gate yet).
    public private(set) var maxShortTermLUFS: Double?

    /// BS.1770's absolute gate, −70 LUFS, as an energy.
    static let absoluteGate = energy(ofLoudness: -70)

    /// A meter for `channels` channels at `sampleRate` frames a second.
    public init(channels: Int, sampleRate: Int) {
        self.channels = channels
        blockFrames = max(1, (sampleRate + 5) / 10)
        filter = KWeighting(sampleRate: Double(sampleRate))
        state = [Double](repeating: 0, count: 5 * max(1, channels))
    }

    /// Meters `frames` interleaved frames.
    public mutating func add(_ samples: UnsafePointer<Float>, frames: Int) {
        var offset = 0
        while offset < frames {
            let take = min(frames - offset, blockFrames - framesInBlock)
            filterAndSquare(samples + offset * channels, frames: take)
            offset += take
            framesInBlock += take
            if framesInBlock == blockFrames { endBlock() }
        }
    }

    private mutating func filterAndSquare(_ samples: UnsafePointer<Float>, frames: Int) {
        let channels = channels, k = filter
        state.withUnsafeMutableBufferPointer { buffer in
            // Struct of arrays: one run of `channels` values per field, so the channel loop vectorises.
            let base = buffer.baseAddress!
            let s1 = base, s2 = base + channels, s3 = base + 2 * channels, s4 = base + 3 * channels
            let squares = base + 4 * channels
            for frame in 0..<frames {
                let input = samples + frame * channels
                for channel in 0..<channels {
                    // The shelf, then the high-pass, each a biquad in transposed direct form II.
                    let x = Double(input[channel])
                    let shelved = k.b0 * x + s1[channel]
                    s1[channel] = k.b1 * x - k.a1 * shelved + s2[channel]
                    s2[channel] = k.b2 * x - k.a2 * shelved
                    let weighted = shelved + s3[channel]
                    s3[channel] = -2 * shelved - k.c1 * weighted + s4[channel]
                    s4[channel] = shelved - k.c2 * weighted
                    squares[channel] += weighted * weighted
                }
            }
            // A decayed state would otherwise become subnormal, and slow.
            for index in 0..<(4 * channels) where abs(base[index]) < 1e-20 { base[index] = 0 }
        }
    }

    private mutating func endBlock() {
        var sum = 0.0
        for channel in 0..<channels {
            sum += state[4 * channels + channel]
            state[4 * channels + channel] = 0
        }
        recent[blocks % 30] = sum / Double(blockFrames)
        blocks += 1
        framesInBlock = 0
        let momentary = mean(ofLast: 4), shortTerm = mean(ofLast: 30)
        if momentary > 0 { maxMomentaryLUFS = max(maxMomentaryLUFS ?? -.infinity, Self.loudness(ofEnergy: momentary)) }
        if shortTerm > 0 { maxShortTermLUFS = max(maxShortTermLUFS ?? -.infinity, Self.loudness(ofEnergy: shortTerm)) }
        if blocks >= 4, momentary >= Self.absoluteGate { gatingBlocks.append(momentary) }
        if blocks >= 30, blocks % 10 == 0, shortTerm >= Self.absoluteGate { shortTermBlocks.append(shortTerm) }
    }

    private func mean(ofLast count: Int) -> Double {
        var sum = 0.0
        for back in 0..<min(count, 30) { sum += recent[(blocks - 1 - back + 30) % 30] }
        return sum / Double(count)
    }

    /// Integrated loudness: the gating blocks above the absolute gate and
    /// above the relative gate (10 LU under their mean), LUFS; nil when none pass.
    public var integratedLUFS: Double? {
        guard !gatingBlocks.isEmpty else { return nil }
        let relativeGate = gatingBlocks.reduce(0, +) / Double(gatingBlocks.count) * 0.1
        let gated = gatingBlocks.filter { $0 >= relativeGate }
        guard !gated.isEmpty else { return nil }
        return Self.loudness(ofEnergy: gated.reduce(0, +) / Double(gated.count))
    }

    /// Loudness range (Tech 3342): of the short-term blocks above the
    /// absolute gate and 20 LU under their mean, the 95th less the 10th
    /// percentile, LU; nil before 3 s and while integrated loudness is nil.
    public var loudnessRangeLU: Double? {
        guard blocks >= 30, integratedLUFS != nil else { return nil }
        let sorted = shortTermBlocks.sorted()
        guard !sorted.isEmpty else { return 0 }
        let relativeGate = sorted.reduce(0, +) / Double(sorted.count) * 0.01
        let gated = sorted.drop { $0 < relativeGate }
        guard !gated.isEmpty else { return 0 }
        func percentile(_ fraction: Double) -> Double {
            gated[gated.startIndex + Int(Double(gated.count - 1) * fraction + 0.5)]
        }
        return Self.loudness(ofEnergy: percentile(0.95)) - Self.loudness(ofEnergy: percentile(0.1))
    }

    static func loudness(ofEnergy energy: Double) -> Double { -0.691 + 10 * log10(energy) }
    static func energy(ofLoudness loudness: Double) -> Double { pow(10, (loudness + 0.691) / 10) }
}

/// BS.1770's K-weighting at a sample rate: the high shelf (b, a) and the
/// high-pass (1, −2, 1; c), from the analogue designs' published parameters,
/// by the bilinear transform (the same coefficients as libebur128 computes;
/// at 48 kHz those printed in BS.1770-4).
struct KWeighting {
    let b0, b1, b2, a1, a2: Double
    let c1, c2: Double

    init(sampleRate: Double) {
        var f0 = 1681.974450955533, q = 0.7071752369554196
        let gain = 3.999843853973347
        var k = tan(Double.pi * f0 / sampleRate)
        let vh = pow(10, gain / 20), vb = pow(vh, 0.4996667741545416)
        var a0 = 1 + k / q + k * k
        b0 = (vh + vb * k / q + k * k) / a0
        b1 = 2 * (k * k - vh) / a0
        b2 = (vh - vb * k / q + k * k) / a0
        a1 = 2 * (k * k - 1) / a0
        a2 = (1 - k / q + k * k) / a0
        f0 = 38.13547087602444
        q = 0.5003270373238773
        k = tan(Double.pi * f0 / sampleRate)
        a0 = 1 + k / q + k * k
        c1 = 2 * (k * k - 1) / a0
        c2 = (1 - k / q + k * k) / a0
    }
}
