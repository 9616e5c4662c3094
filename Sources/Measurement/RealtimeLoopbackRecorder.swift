import JackKit
import JackRuntime
import Synchronization

/// The real-time half of a loopback check: each cycle it writes the test
/// signal for that cycle's frame times straight into the output port buffers
/// and copies the input port buffers into storage preallocated for the whole
/// run. Nothing here allocates or locks; the analysis runs afterwards.
public final class RealtimeLoopbackRecorder: @unchecked Sendable { // the real-time thread fills a cycle before publishing the count (release); readers read below it
    /// The signal sent on every output channel.
    public let signal: TestSignal
    /// Channels sent and captured.
    public let channels: Int
    /// Period the run expects, frames; a cycle of another size stops recording.
    public let period: Int
    /// Cycles the storage holds.
    public let capacityCycles: Int
    let captured: UnsafeMutableBufferPointer<Float>
    let cycleStarts: UnsafeMutableBufferPointer<UInt32>
    let recordedCycles = Atomic<Int>(0)
    let periodMismatch = Atomic<Bool>(false)
    let armed = Atomic<Bool>(false)

    /// Storage for `cycles` cycles of `period` frames on `channels` channels.
    public init(signal: TestSignal, channels: Int, period: Int, cycles: Int) {
        self.signal = signal
        self.channels = channels
        self.period = period
        capacityCycles = cycles
        captured = .allocate(capacity: cycles * channels * period)
        captured.initialize(repeating: 0)
        cycleStarts = .allocate(capacity: cycles)
        cycleStarts.initialize(repeating: 0)
    }

    deinit {
        captured.deallocate()
        cycleStarts.deallocate()
    }

    /// Starts sending and recording from the next cycle.
    public func arm() { armed.store(true, ordering: .releasing) }

    /// Records the whole run again from the next cycle (for a run that an
    /// xrun disturbed). Only once complete: the real-time side then no longer
    /// touches the storage.
    public func recordAgain() {
        precondition(isComplete, "recordAgain() before the run was complete")
        periodMismatch.store(false, ordering: .relaxed)
        recordedCycles.store(0, ordering: .releasing)
    }

    /// Cycles recorded so far.
    public var cyclesRecorded: Int { recordedCycles.load(ordering: .acquiring) }

    /// Whether every cycle of storage has been recorded.
    public var isComplete: Bool { cyclesRecorded >= capacityCycles }

    /// Whether the server changed the period during the run.
    public var sawPeriodChange: Bool { periodMismatch.load(ordering: .acquiring) }

    /// The render block for a measurement session.
    public var renderBlock: RenderBlock { { cycle in self.process(cycle) } }

    /// One cycle, on JACK's real-time thread.
    @_noAllocation @_noLocks
    public func process(_ cycle: ProcessCycle) {
        // Plain locals: `&&` takes an autoclosure, and one capturing `self`
        // would retain it.
        let frames = cycle.frameCount
        let expectedFrames = period
        let cycleIndex = recordedCycles.load(ordering: .relaxed)
        let hasRoom = cycleIndex < capacityCycles
        let recording = armed.load(ordering: .acquiring) ? hasRoom : false
        let sizeMatches = frames == expectedFrames
        if recording && !sizeMatches { periodMismatch.store(true, ordering: .releasing) }
        guard recording && sizeMatches else {
            for buffer in cycle.outputs { buffer.update(repeating: 0, count: frames) }
            return
        }
        let start = cycle.cycleStartFrame
        var channel = 0
        while channel < cycle.outputs.count {
            let buffer = cycle.outputs[channel]
            var frame = 0
            while frame < frames {
                buffer[frame] = signal.sample(channel: channel, frame: start &+ UInt32(truncatingIfNeeded: frame))
                frame += 1
            }
            channel += 1
        }
        channel = 0
        while channel < min(channels, cycle.inputs.count) {
            let source = cycle.inputs[channel]
            let destination = captured.baseAddress! + (cycleIndex * channels + channel) * expectedFrames
            var frame = 0
            while frame < frames {
                destination[frame] = source[frame]
                frame += 1
            }
            channel += 1
        }
        cycleStarts[cycleIndex] = start
        recordedCycles.store(cycleIndex + 1, ordering: .releasing)
    }

    /// The captured sample of `channel` at `frame` within recorded cycle `cycle`.
    func capturedSample(cycle: Int, channel: Int, frame: Int) -> Float {
        captured[(cycle * channels + channel) * period + frame]
    }
}
