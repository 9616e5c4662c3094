import JackKit
import Synchronization

/// What a processor does to its output buffers after the render block: a gain
/// (ducking) that moves towards its target by a fixed step per sample, so a
/// change never clicks; a mute (an interruption: silent from the next cycle);
/// and the number of the last cycle whose output was audible, so the non-real-
/// time side can tell whether the session is producing sound (the level watch:
/// every cycle, one cycle in so many frames, or off).
///
/// JackRuntime owns this one post-render stage, rather than the session composing
/// it into the render block, because its state then lives in the processor's
/// cycle block, on the cache lines the callback reads anyway: as a separate
/// object it was one more cold line per cycle (about a fifth of a 2-channel
/// passthrough's cost, measured with `callback-bench`). The policy (when to
/// duck, mute or watch) stays with the session; this is its handle.
///
/// At unity gain, unmuted and not watching the level, the cycle reads three
/// atomics and touches no sample: a measurement-mode path stays bit-exact.
public struct OutputStage: @unchecked Sendable { // the pointer is into `owner`'s cycle block, which lives as long as it
    let owner: RealtimeProcessor
    var state: UnsafeMutablePointer<OutputStageState> { owner.outputStageState }

    /// Sets the gain the outputs move towards, linear.
    public func setTargetGain(_ gain: Float) {
        state.pointee.targetGainBits.store(max(0, gain).bitPattern, ordering: .relaxed)
    }

    /// Silences the outputs from the next cycle on (and lets them back in with a ramp).
    public func setMuted(_ muted: Bool) { state.pointee.muted.store(muted, ordering: .releasing) }

    /// How often the stage looks at the output level.
    public func setLevelWatch(_ watch: LevelWatch) { state.pointee.watchSpacing.store(watch.spacing, ordering: .relaxed) }

    /// How often the stage looks at the output level now.
    public var levelWatch: LevelWatch { LevelWatch(spacing: state.pointee.watchSpacing.load(ordering: .relaxed)) }

    /// The processor's cycle count at the last audible cycle (0: none yet).
    public var lastAudibleCycle: UInt64 { state.pointee.lastAudible.load(ordering: .acquiring) }
}

/// How often the output stage looks at the output level (the watch that sets
/// `lastAudibleCycle`). A silent cycle is silent only once every sample has
/// been read, so an exact watch reads every output sample of every cycle:
/// with silent outputs that read is most of a small session's cycle. Looking
/// at one cycle in so many frames reads a fraction of them, and a sound is
/// still seen when it lasts at least those frames plus one period.
public enum LevelWatch: Equatable, Sendable {
    /// Not looked at (`lastAudibleCycle` stays as it is).
    case off
    /// Every cycle: one audible sample anywhere is seen.
    case everyCycle
    /// The first cycle after at least `frames` frames since the last look (1…65,535).
    case sampled(frames: Int)

    /// Frames between looks as the real-time side keeps them: 0 off, 1 every cycle.
    var spacing: UInt32 {
        switch self {
        case .off: 0
        case .everyCycle: 1
        case .sampled(let frames): UInt32(min(max(frames, 1), 65_535))
        }
    }

    init(spacing: UInt32) {
        switch spacing {
        case 0: self = .off
        case 1: self = .everyCycle
        default: self = .sampled(frames: Int(spacing))
        }
    }
}

/// The output stage's state, inside the processor's cycle block.
struct OutputStageState: ~Copyable {
    let targetGainBits = Atomic<UInt32>(Float(1).bitPattern)
    let muted = Atomic<Bool>(false)
    /// Frames between looks at the level (`LevelWatch.spacing`).
    let watchSpacing = Atomic<UInt32>(0)
    let lastAudible = Atomic<UInt64>(0)
    /// The gain of the last sample written (real-time thread only).
    var currentGain: Float = 1
    /// Frames since the level was last looked at (real-time thread only).
    var framesSinceLook = 0
    /// Gain change per sample: a full 0…1 swing takes 480 samples (10 ms at 48 kHz).
    static let rampStep: Float = 1.0 / 480
    /// A peak above this (−80 dBFS) makes a cycle audible.
    static let audibleThreshold: Float = 1e-4

    /// The stage's part of a cycle, after the render block: inline, so a
    /// measurement-mode cycle makes no call and touches no sample.
    @inline(__always)
    mutating func process(_ outputs: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>, frames: Int, cycle: UInt64) {
        let looks = looksAtLevel(frames: frames)
        if looks || shapesSamples { apply(outputs, frames: frames, cycle: cycle, looks: looks) }
    }

    /// Whether this cycle of `frames` frames is one the level watch looks at
    /// (and counts it).
    @inline(__always)
    mutating func looksAtLevel(frames: Int) -> Bool {
        let spacing = Int(watchSpacing.load(ordering: .relaxed))
        guard spacing != 0 else { return false }
        framesSinceLook &+= frames
        guard framesSinceLook >= spacing else { return false }
        framesSinceLook = 0
        return true
    }

    /// Whether the samples are changed this cycle (muted, or a gain away from unity).
    /// The gains are compared as bit patterns (1 has one): a comparison of
    /// floats reads the constant 1 from the binary's read-only data, a cache
    /// line no other work of the cycle touches, so a thread woken cold
    /// missed on it every cycle (a sixth of the trampoline's own samples
    /// in perf); an integer comparison carries it in the instruction.
    var shapesSamples: Bool {
        @inline(__always) get {
            muted.load(ordering: .relaxed) || currentGain.bitPattern != Float(1).bitPattern
                || targetGainBits.load(ordering: .relaxed) != Float(1).bitPattern
        }
    }

    /// Applies mute and gain to this cycle's outputs, and looks at their
    /// level when `looks` (a muted cycle is silent: not looked at).
    @_noAllocation @_noLocks
    mutating func apply(_ outputs: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>, frames: Int, cycle: UInt64,
                        looks: Bool) {
        if muted.load(ordering: .relaxed) {
            var channel = 0
            while channel < outputs.count {
                outputs[channel].update(repeating: 0, count: frames)
                channel += 1
            }
            currentGain = 0
            return
        }
        let targetBits = targetGainBits.load(ordering: .relaxed)
        let target = Float(bitPattern: targetBits)
        // Bit patterns, as in `shapesSamples`: a cycle that only looks at the level touches no constant.
        if currentGain.bitPattern != Float(1).bitPattern || targetBits != Float(1).bitPattern {
            var gain = currentGain
            var frame = 0
            while frame < frames {
                if gain < target {
                    gain = min(target, gain + Self.rampStep)
                } else if gain > target {
                    gain = max(target, gain - Self.rampStep)
                }
                var channel = 0
                while channel < outputs.count {
                    outputs[channel][frame] *= gain
                    channel += 1
                }
                frame += 1
            }
            currentGain = gain
        }
        guard looks else { return }
        if Self.isAudible(outputs, frames: frames) { lastAudible.store(cycle, ordering: .releasing) }
    }

    /// Whether any sample is above the threshold. Eight samples at a time,
    /// on the bit patterns: with the sign bit cleared, a larger magnitude has
    /// a larger pattern, so one integer comparison per lane tells (plain SSE2).
    /// The scan stops at the first audible channel.
    @_noAllocation @_noLocks
    static func isAudible(_ outputs: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>, frames: Int) -> Bool {
        let threshold = Int32(bitPattern: Self.audibleThreshold.bitPattern)
        let limit = SIMD8<Int32>(repeating: threshold)
        let magnitude = SIMD8<Int32>(repeating: 0x7FFF_FFFF)
        var channel = 0
        while channel < outputs.count {
            let samples = UnsafeRawPointer(outputs[channel])
            var above = SIMDMask<SIMD8<Int32>>(repeating: false)
            var frame = 0
            while frame + 8 <= frames {
                let bits = samples.loadUnaligned(fromByteOffset: frame * MemoryLayout<Float>.stride, as: SIMD8<Int32>.self)
                above .|= (bits & magnitude) .> limit
                frame += 8
            }
            if any(above) { return true }
            // The last samples (a period not a multiple of 8) by the same
            // comparison: NaN and the infinities are above, as in the lanes.
            while frame < frames {
                if Int32(bitPattern: outputs[channel][frame].bitPattern & 0x7FFF_FFFF) > threshold { return true }
                frame += 1
            }
            channel += 1
        }
        return false
    }
}
