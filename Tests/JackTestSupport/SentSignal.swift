import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import Measurement
import Recording
import Synchronization
import XCTest

/// What the sender sends: a pure function of channel and frame time.
public final class SentSignal: @unchecked Sendable {
    public let signal: TestSignal
    /// Samples on the 24-bit grid (k / 2^23), so FLAC and 24-bit files hold them exactly.
    public let onTwentyFourBitGrid: Bool
    /// JACK frame time from which the signal sounds, +1 (0: from the start).
    public let onset = Atomic<Int64>(0)
    /// The wall clock (CLOCK_REALTIME, nanoseconds) when the cycle holding
    /// the onset was rendered, less the frames from its start to the onset
    /// at 48 kHz (0: not yet): when the onset sounded, by the clock a
    /// recorder's TimeReference is on, however much time a loaded jackd lost
    /// before it.
    public let onsetSounded = Atomic<UInt64>(0)

    public init(signal: TestSignal, onTwentyFourBitGrid: Bool) {
        self.signal = signal
        self.onTwentyFourBitGrid = onTwentyFourBitGrid
    }

    @inline(__always)
    public func sample(channel: Int, frame: UInt32, onset onsetFrame: Int64) -> Float {
        if onsetFrame > 0 && Int32(bitPattern: frame &- UInt32(truncatingIfNeeded: onsetFrame - 1)) < 0 { return 0 }
        let value = signal.sample(channel: channel, frame: frame)
        guard onTwentyFourBitGrid else { return value }
        // TestSignal is k / 2^24; halving k puts it on the 2^-23 grid.
        return Float(Int32(value * Float(1 << 24)) >> 1) / Float(1 << 23)
    }

    public func render(_ cycle: RenderCycle) {
        let onsetFrame = onset.load(ordering: .relaxed)
        let start = cycle.cycleStartFrame
        if onsetFrame > 0, onsetSounded.load(ordering: .relaxed) == 0 {
            let into = Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: onsetFrame - 1) &- start))
            if into >= 0 && into < cycle.frameCount {
                var now = timespec()
                clock_gettime(CLOCK_REALTIME, &now)
                let nanoseconds = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
                onsetSounded.store(nanoseconds + UInt64(into) * 1_000_000_000 / 48000, ordering: .relaxed)
            }
        }
        for channel in 0..<cycle.outputs.count {
            let buffer = cycle.outputs[channel]
            for frame in 0..<cycle.frameCount {
                buffer[frame] = sample(channel: channel, frame: start &+ UInt32(frame), onset: onsetFrame)
            }
        }
    }
}

extension SentSignal {
    /// What `compare` found, one period of one channel at a time.
    public struct Comparison {
        /// Channel-periods that equal what was sent at the same frame times (delay 0).
        public var sameCycle = 0
        /// Channel-periods that equal what was sent one period earlier.
        public var previousCycle = 0
        /// Channel-periods whose every frame is one of the two cycles, both
        /// present: the loopback copied the buffer while the sender wrote it,
        /// and one overtook the other, or each the other in turn (seen: same
        /// then before; before then same; before, same, before).
        public var torn = 0
        /// Channel-periods that equal what was sent two periods earlier: the
        /// loopback handed on a period it already had once more (its copy ran
        /// before the sender's cycle; seen at 64 frames with 16 channels on a
        /// loaded -S server, while jackd's dummy driver overran its timer).
        public var repeated = 0
        /// Channel-periods inside a logged gap, all silent as they must be.
        public var silentGaps = 0
        /// Channel-periods right after a gap, whose source cycle the server never ran.
        public var withoutSource = 0
        /// Channel-periods that match nothing, and the first of them.
        public var mismatched = 0
        public var firstMismatch: String?
        /// All channel-periods compared.
        public var total: Int { sameCycle + previousCycle + torn + silentGaps + withoutSource + mismatched }
    }

    /// Compares `samples` (interleaved, `channels` wide) recorded from JACK
    /// frame time `firstFrameTime` on, one period of one channel at a time,
    /// with what was sent. Each must be bit-identical to what was sent in the
    /// same cycle or, through the loopback, the cycle before (which of the two
    /// is up to jackd's scheduling, see the tests); inside a logged gap it
    /// must be silent.
    public func compare(_ samples: [Float], channels recorded: Int, firstFrameTime: UInt32, period: Int,
                 gaps: [(at: Int, frames: Int)] = []) -> Comparison {
        var result = Comparison()
        let onsetFrame = onset.load(ordering: .relaxed)
        let total = samples.count / recorded
        func inGap(_ frame: Int) -> Bool { gaps.contains { frame >= $0.at && frame < $0.at + $0.frames } }
        func matches(_ frames: Range<Int>, _ channel: Int, delay: Int) -> Bool {
            frames.allSatisfy { frame in
                let sent = firstFrameTime &+ UInt32(frame) &- UInt32(delay)
                return samples[frame * recorded + channel].bitPattern == sample(channel: channel, frame: sent, onset: onsetFrame).bitPattern
            }
        }
        func matches(_ start: Int, _ count: Int, _ channel: Int, delay: Int) -> Bool {
            matches(start..<(start + count), channel, delay: delay)
        }
        /// Which cycle each frame of a channel-period equals, in runs: 0 the
        /// same cycle, 1 the one before, 2 two before, nil none of them.
        func runs(_ start: Int, _ count: Int, _ channel: Int) -> [(cycles: Int?, frames: Range<Int>)] {
            var found: [(cycles: Int?, frames: Range<Int>)] = []
            for frame in start..<(start + count) {
                let cycles = (0...2).first { matches(frame..<(frame + 1), channel, delay: $0 * period) }
                if let last = found.last, last.cycles == cycles {
                    found[found.count - 1].frames = last.frames.lowerBound..<(frame + 1)
                } else {
                    found.append((cycles, frame..<(frame + 1)))
                }
            }
            return found
        }
        /// Each frame one of the two cycles, and both there.
        func isTorn(_ start: Int, _ count: Int, _ channel: Int) -> Bool {
            let found = runs(start, count, channel)
            return found.allSatisfy { $0.cycles == 0 || $0.cycles == 1 } && found.count > 1
        }
        for start in stride(from: 0, to: total, by: period) {
            let count = min(period, total - start)
            for channel in 0..<recorded {
                if inGap(start) {
                    if (start..<(start + count)).allSatisfy({ samples[$0 * recorded + channel] == 0 }) {
                        result.silentGaps += 1
                        continue
                    }
                } else if matches(start, count, channel, delay: 0) {
                    result.sameCycle += 1
                    continue
                } else if matches(start, count, channel, delay: period) {
                    result.previousCycle += 1
                    continue
                } else if isTorn(start, count, channel) {
                    result.torn += 1
                    continue
                } else if matches(start, count, channel, delay: 2 * period) {
                    result.repeated += 1
                    continue
                } else if start > 0 && inGap(start - 1) {
                    result.withoutSource += 1
                    continue
                }
                result.mismatched += 1
                if result.firstMismatch == nil {
                    let sent = sample(channel: channel, frame: firstFrameTime &+ UInt32(start), onset: onsetFrame)
                    let described = runs(start, count, channel).prefix(6).map { run in
                        "\(run.frames.lowerBound - start)..<\(run.frames.upperBound - start) "
                            + (run.cycles.map { ["same cycle", "cycle before", "two cycles before"][$0] } ?? "none")
                    }
                    result.firstMismatch = "frame \(start) channel \(channel): got \(samples[start * recorded + channel]), "
                        + "sent \(sent) in that cycle" + (inGap(start) ? " (inside a gap, not silent)" : "")
                        + "; its frames: " + described.joined(separator: ", ")
                }
            }
        }
        return result
    }
}
