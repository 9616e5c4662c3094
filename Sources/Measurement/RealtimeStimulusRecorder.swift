import Capture
import JackKit
import JackRuntime
import Synchronization

/// The real-time half of a stepped-sine or sweep measurement: from the cycle
/// after `arm()` it plays a prepared stimulus on every output (or on those
/// it was given: silence on the others), straight into the port buffers, and
/// copies every input into storage made for the whole run, until the
/// stimulus has been played once. Nothing here allocates or locks;
/// generation happened before, analysis runs after (`captured`).
public final class RealtimeStimulusRecorder: @unchecked Sendable { // the real-time thread writes below `position` before publishing it (release); readers read below it
    /// Inputs recorded.
    public let channels: Int
    /// Frames played and recorded.
    public let length: Int
    let stimulus: UnsafeMutableBufferPointer<Float>
    let storage: UnsafeMutableBufferPointer<Float>
    /// For each output port (up to `outputCapacity`), whether it plays the stimulus.
    let playsOn: UnsafeMutableBufferPointer<Bool>
    let position = Atomic<Int>(0)
    let armed = Atomic<Bool>(false)
    /// Posted by the real-time thread when a run is complete.
    let completion = ReaderWakeup(everyFrames: 1)

    /// A run of `stimulus` on every output (or only on the outputs whose
    /// indices `outputs` holds, of `outputCount`), recording `channels` inputs.
    public init(stimulus: [Float], channels: Int, outputs: Set<Int>? = nil, outputCount: Int = 64) {
        self.channels = channels
        length = stimulus.count
        self.stimulus = .allocate(capacity: stimulus.count)
        _ = self.stimulus.initialize(from: stimulus)
        storage = .allocate(capacity: stimulus.count * channels)
        storage.initialize(repeating: 0)
        let count = max(outputCount, (outputs?.max() ?? 0) + 1)
        playsOn = .allocate(capacity: count)
        for index in 0..<count { (playsOn.baseAddress! + index).initialize(to: outputs?.contains(index) ?? true) }
    }

    deinit {
        stimulus.deallocate()
        storage.deallocate()
        playsOn.deallocate()
    }

    /// Starts playing and recording from the next cycle.
    public func arm() { armed.store(true, ordering: .releasing) }

    /// Plays and records the whole run again from the next cycle (a run an
    /// xrun spoilt). Only once complete: the real-time side no longer touches the storage then.
    public func playAgain() {
        precondition(isComplete, "playAgain() before the run was complete")
        position.store(0, ordering: .releasing)
    }

    /// Frames played and recorded so far.
    public var framesDone: Int { position.load(ordering: .acquiring) }

    /// Whether the whole stimulus has been played and recorded.
    public var isComplete: Bool { framesDone >= length }

    /// Sleeps until the run is complete (the real-time thread posts it) or
    /// `timeout` seconds pass on the monotonic clock. Whether it is complete.
    public func waitUntilComplete(timeout: Double) -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while !isComplete {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            completion.wait(timeout: Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18)
        }
        return true
    }

    /// What input `channel` recorded (once complete).
    public func captured(channel: Int) -> [Float] {
        Array(storage[(channel * length)..<((channel + 1) * length)])
    }

    /// The render block for a measurement session.
    public var renderBlock: RenderBlock { { cycle in self.process(cycle) } }

    /// One cycle, on JACK's real-time thread: the checked kernel, then a post
    /// to the waiting thread once the run is complete (a C call the compiler
    /// cannot check; RealtimeSanitizer and the allocation counter do).
    public func process(_ cycle: ProcessCycle) {
        let wasComplete = isComplete
        play(cycle)
        if !wasComplete && isComplete { completion.wakeNow() }
    }

    @_noAllocation @_noLocks
    func play(_ cycle: ProcessCycle) {
        let frames = cycle.frameCount
        let start = position.load(ordering: .relaxed)
        let playing = armed.load(ordering: .acquiring) ? start < length : false
        let count = playing ? min(frames, length - start) : 0
        var channel = 0
        while channel < cycle.outputs.count {
            let buffer = cycle.outputs[channel]
            var frame = 0
            let plays = channel < playsOn.count ? playsOn[channel] : true
            while frame < count && plays {
                buffer[frame] = stimulus[start + frame]
                frame += 1
            }
            while frame < frames {
                buffer[frame] = 0
                frame += 1
            }
            channel += 1
        }
        guard count > 0 else { return }
        channel = 0
        while channel < min(channels, cycle.inputs.count) {
            let source = cycle.inputs[channel]
            let destination = storage.baseAddress! + channel * length + start
            var frame = 0
            while frame < count {
                destination[frame] = source[frame]
                frame += 1
            }
            channel += 1
        }
        position.store(start + count, ordering: .releasing)
    }
}
