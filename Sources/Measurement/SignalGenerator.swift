import Foundation
import JackKit
import JackRuntime
import Synchronization

/// A player's real-time signal source: a sine, white noise or a logarithmic
/// sweep at a set level on every output channel, computed per sample with no
/// allocation. `isPaused` makes it write silence (a player that was interrupted).
public final class SignalGenerator: @unchecked Sendable { // phase and sweep belong to the one real-time thread that renders it; other threads touch only `paused`
    /// What to generate.
    public enum Shape: Sendable, Equatable {
        /// A sine of this frequency, Hz.
        case sine(frequency: Double)
        /// Uniform white noise.
        case noise
        /// A logarithmic sweep from 20 Hz to 20 kHz over this many seconds, repeated.
        case sweep(seconds: Double)
    }

    /// What it generates.
    public let shape: Shape
    /// Peak amplitude, linear.
    public let amplitude: Float
    /// Hz.
    public let sampleRate: Double
    private let paused = Atomic<Bool>(false)
    /// One cycle of a sine plus a guard point, for interpolated lookup (the
    /// real-time code calls no libm function).
    private let sineTable: UnsafeMutableBufferPointer<Float>
    private static let tableSize = 4096
    /// Per-sample growth of the sweep's frequency.
    private let sweepRatio: Double
    private let sweepSamples: Int
    // Real-time thread only.
    private var phase: Double = 0
    private var frequency: Double = 20
    private var sweepPosition = 0
    private var noiseState: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// A generator at `levelDBFS` (peak) for a server at `sampleRate`; the
    /// noise of generators with different `seed`s is unrelated.
    public init(shape: Shape, levelDBFS: Double, sampleRate: Double, seed: UInt64 = 0) {
        noiseState = 0x9E37_79B9_7F4A_7C15 ^ seed
        self.shape = shape
        amplitude = Float(pow(10, levelDBFS / 20))
        self.sampleRate = sampleRate
        sineTable = .allocate(capacity: Self.tableSize + 1)
        for index in 0...Self.tableSize {
            sineTable[index] = Float(sin(2 * Double.pi * Double(index) / Double(Self.tableSize)))
        }
        if case let .sweep(seconds) = shape {
            sweepSamples = max(1, Int(seconds * sampleRate))
            sweepRatio = pow(1000, 1 / Double(sweepSamples))
        } else {
            sweepSamples = 1
            sweepRatio = 1
        }
        if case let .sine(hz) = shape { frequency = hz }
    }

    deinit { sineTable.deallocate() }

    /// The sine's frequency, Hz (the sweep's start, 20 Hz; 0 for noise).
    public var frequencyHz: Double {
        switch shape {
        case let .sine(hz): hz
        case .sweep: 20
        case .noise: 0
        }
    }

    /// Whether it writes silence.
    public var isPaused: Bool { paused.load(ordering: .relaxed) }

    /// Pauses (silence) or resumes.
    public func setPaused(_ pause: Bool) { paused.store(pause, ordering: .relaxed) }

    /// The render block for a session.
    public var renderBlock: RenderBlock { { cycle in self.process(cycle) } }

    /// One cycle, on JACK's real-time thread.
    @_noAllocation @_noLocks
    public func process(_ cycle: ProcessCycle) {
        render(into: cycle.outputs, frames: cycle.frameCount)
    }

    /// Writes the next `frames` samples into every buffer of `outputs` (one
    /// output stream's buffers, say). Real-time thread only.
    @_noAllocation @_noLocks
    public func render(into outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frames: Int) {
        let silent = paused.load(ordering: .relaxed)
        var frame = 0
        while frame < frames {
            let value = silent ? 0 : amplitude * next()
            var channel = 0
            while channel < outputs.count {
                outputs[channel][frame] = value
                channel += 1
            }
            frame += 1
        }
    }

    @_noAllocation @_noLocks
    private func next() -> Float {
        switch shape {
        case .sine:
            return oscillator()
        case .noise:
            noiseState = noiseState &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int32(truncatingIfNeeded: noiseState >> 32)) / Float(Int32.max)
        case .sweep:
            // 20 Hz to 20 kHz: the frequency grows by a constant ratio per sample.
            let value = oscillator()
            frequency *= sweepRatio
            sweepPosition += 1
            if sweepPosition >= sweepSamples {
                sweepPosition = 0
                frequency = 20
            }
            return value
        }
    }

    /// The sine at the current phase (interpolated from the table), then one step on.
    @_noAllocation @_noLocks
    private func oscillator() -> Float {
        let position = phase * Double(Self.tableSize)
        let index = Int(position)
        let fraction = Float(position - Double(index))
        let value = sineTable[index] + fraction * (sineTable[index + 1] - sineTable[index])
        // Wrapped whole, so that even a step of more than one cycle (a
        // frequency above the sample rate) stays inside the table.
        phase += frequency / sampleRate
        if phase >= 1 { phase -= Double(Int(phase)) }
        return value
    }
}
