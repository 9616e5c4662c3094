import JackKit
import JackRuntime
import Synchronization

/// The real-time half of a capture (a recording, a live meter): each cycle it interleaves the input
/// port buffers into a preallocated block and writes that block, preceded by
/// a header (JACK frame time, frame count, monotonic time, server epoch,
/// frames dropped so far), into one ring for the disk thread. It never
/// allocates, locks or waits; a cycle that finds the ring full is dropped
/// whole and its frames counted, so the disk thread, comparing two cycles'
/// counts, knows exactly how much silence to write between them.
public final class RealtimeCapture: @unchecked Sendable { // its buffers belong to the real-time thread; the disk thread reads through the ring and atomics
    /// Channels per frame.
    public let channels: Int
    /// Captured cycles: header then interleaved frames.
    public let ring: SampleRing
    private let ringReference: Unmanaged<SampleRing>
    private let interleaved: UnsafeMutableBufferPointer<Float>
    private let header: UnsafeMutableBufferPointer<Float>
    /// Frames of cycles dropped because the ring was full (written by the real-time thread).
    public let droppedFrames = Atomic<Int>(0)
    /// Bumped by the non-real-time side when the server is lost, so the disk
    /// thread knows frames of the next server are not a continuation.
    public let serverEpoch = Atomic<UInt32>(0)
    /// Cleared before the session is deactivated at the end: jackd's
    /// deactivation disconnects the ports one by one and may run cycles in
    /// between, which would hand the take silence that was never played.
    public let accepting = Atomic<Bool>(true)
    /// Wakes the ring's reader once `wakeReaderEvery` frames were written.
    public let wakeup: ReaderWakeup
    /// A capture of `channels` channels with a ring holding `seconds` at
    /// `sampleRate`, whose reader is woken every `wakeReaderEvery` frames
    /// (1: every cycle).
    public init(channels: Int, ringSeconds seconds: Double, sampleRate: Int, wakeReaderEvery: Int = 1) {
        self.channels = channels
        wakeup = ReaderWakeup(everyFrames: wakeReaderEvery)
        let frames = max(Double(JackPeriod.maximumFrames), seconds * Double(sampleRate))
        ring = SampleRing(minimumCapacity: Int(frames) * channels + 2 * CycleHeader.floatCount)
        ringReference = .passUnretained(ring)
        interleaved = .allocate(capacity: JackPeriod.maximumFrames * max(1, channels))
        interleaved.initialize(repeating: 0)
        header = .allocate(capacity: CycleHeader.floatCount)
        header.initialize(repeating: 0)
    }

    deinit {
        interleaved.deallocate()
        header.deallocate()
    }

    /// Frames interleaved together: 16 frames are one cache line of each channel's port buffer.
    static let tileFrames = 16

    /// Frames the ring holds when full.
    public var capacityFrames: Int { (ring.capacity - CycleHeader.floatCount) / max(1, channels) }

    /// The render block for a record-category session.
    public var renderBlock: RenderBlock { { cycle in self.process(cycle) } }

    /// One cycle, on JACK's real-time thread: reads the monotonic clock,
    /// runs the checked kernel, and wakes the reader when it is time (C calls
    /// the compiler cannot check; RealtimeSanitizer and the allocation
    /// counter do).
    public func process(_ cycle: ProcessCycle) {
        guard accepting.load(ordering: .acquiring) else { return }
        capture(cycle, at: MonotonicClock.nanoseconds)
        wakeup.written(cycle.frameCount)
    }

    /// Interleaves and hands over one cycle captured at `now` (nanoseconds).
    @_noAllocation @_noLocks
    func capture(_ cycle: ProcessCycle, at now: UInt64) {
        let frames = min(cycle.frameCount, JackPeriod.maximumFrames)
        let count = min(cycle.inputs.count, channels)
        // A tile of frames at a time, every channel into it: the tile's
        // interleaved frames (4 KiB at 64 channels) stay in the first-level
        // cache while each channel's stores land 256 bytes apart in them.
        // Channel by channel over the whole period, as before, each line of
        // the 64 KiB block was fetched again for every channel it holds (the
        // copy was 7 % of `jas record`'s CPU at 64 channels).
        var tileStart = 0
        while tileStart < frames {
            let tileEnd = min(tileStart + Self.tileFrames, frames)
            var channel = 0
            while channel < channels {
                var frame = tileStart
                var index = tileStart * channels + channel
                if channel < count {
                    let source = cycle.inputs[channel]
                    while frame < tileEnd {
                        interleaved[index] = source[frame]
                        frame += 1
                        index += channels
                    }
                } else {
                    while frame < tileEnd {
                        interleaved[index] = 0
                        frame += 1
                        index += channels
                    }
                }
                channel += 1
            }
            tileStart = tileEnd
        }
        let dropped = droppedFrames.load(ordering: .relaxed)
        CycleHeader.write(frameTime: cycle.cycleStartFrame, frames: frames, nanoseconds: now,
                          epoch: serverEpoch.load(ordering: .relaxed), droppedBefore: UInt32(truncatingIfNeeded: dropped),
                          into: header)
        let body = UnsafeBufferPointer(start: interleaved.baseAddress, count: frames * channels)
        let prefix = UnsafeBufferPointer(header)
        let written = ringReference._withUnsafeGuaranteedRef { $0.write(prefix, body) }
        // One writer: a plain store, no read-modify-write.
        if !written { droppedFrames.store(dropped &+ frames, ordering: .relaxed) }
    }
}
