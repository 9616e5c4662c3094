import Capture
import JackKit
import JackRuntime

/// The real-time half of the latency measurement: each cycle it writes the
/// multi-tone signal for that cycle's frame times into the first output port
/// buffer (silence on any other), and hands the first input port buffer to
/// the analysis through a ring, preceded by the capture's `CycleHeader` (the
/// cycle's start frame, frame count and clock). Nothing here allocates,
/// locks or waits; a full ring drops the cycle, which the reader sees as a
/// gap in frame times.
public final class RealtimeDelayProbe: @unchecked Sendable { // its tables are filled before activation and only read after; cycles reach the reader through the ring
    let table: UnsafeMutableBufferPointer<Float>
    let header: UnsafeMutableBufferPointer<Float>
    /// Captured cycles, for the analysis.
    public let ring: SampleRing
    private let ringReference: Unmanaged<SampleRing>
    /// Posted after every cycle handed over, so the analysis sleeps until there is one.
    public let wakeup = ReaderWakeup(everyFrames: 1)

    /// A probe sending `signal`, with a ring holding `seconds` at `sampleRate`.
    public init(signal: MultiToneSignal, ringSeconds seconds: Double = 10, sampleRate: Int = 192_000) {
        table = .allocate(capacity: signal.table.count)
        _ = table.initialize(from: signal.table)
        header = .allocate(capacity: CycleHeader.floatCount)
        header.initialize(repeating: 0)
        ring = SampleRing(minimumCapacity: Int(seconds * Double(sampleRate)))
        ringReference = .passUnretained(ring)
    }

    deinit {
        table.deallocate()
        header.deallocate()
    }

    /// The render block for a measurement-mode session.
    public var renderBlock: RenderBlock { { cycle in self.process(cycle) } }

    /// One cycle, on JACK's real-time thread: reads the monotonic clock, runs
    /// the checked kernel and wakes the analysis (C calls the compiler cannot
    /// check; RealtimeSanitizer and the allocation counter do).
    public func process(_ cycle: ProcessCycle) {
        process(cycle, at: MonotonicClock.nanoseconds)
        if cycle.inputs.count > 0 { wakeup.written(cycle.frameCount) }
    }

    /// Writes the signal and hands over the input of one cycle that began at `now` (nanoseconds).
    @_noAllocation @_noLocks
    func process(_ cycle: ProcessCycle, at now: UInt64) {
        let frames = cycle.frameCount
        let start = cycle.cycleStartFrame
        let mask = UInt32(table.count - 1)
        var channel = 0
        while channel < cycle.outputs.count {
            let buffer = cycle.outputs[channel]
            if channel == 0 {
                var frame = 0
                while frame < frames {
                    buffer[frame] = table[Int((start &+ UInt32(truncatingIfNeeded: frame)) & mask)]
                    frame += 1
                }
            } else {
                buffer.update(repeating: 0, count: frames)
            }
            channel += 1
        }
        guard cycle.inputs.count > 0 else { return }
        CycleHeader.write(frameTime: start, frames: frames, nanoseconds: now, epoch: 0,
                          droppedBefore: 0, into: header)
        let captured = UnsafeBufferPointer(start: cycle.inputs[0], count: frames)
        let prefix = UnsafeBufferPointer(header)
        // Borrow the ring without a retain/release pair (which may lock).
        _ = ringReference._withUnsafeGuaranteedRef { $0.write(prefix, captured) }
    }
}
