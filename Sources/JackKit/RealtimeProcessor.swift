import CJack
import Synchronization

/// What the process callback hands the render block every cycle: the JACK
/// port buffers themselves (zero copy), valid only during the call.
public struct ProcessCycle {
    /// Frames in this cycle (the period size).
    public let frameCount: Int
    /// One buffer per input port, in registration order: what the port received.
    public let inputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>
    /// One buffer per output port, in registration order: what the port will send.
    public let outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>
    /// The client whose frame time this cycle reads (nil: `givenStartFrame`).
    @usableFromInline let client: OpaquePointer?
    @usableFromInline let givenStartFrame: UInt32

    /// JACK's frame time at the start of this cycle (`jack_last_frame_time`).
    /// Read from the server when asked: it costs a few hundred nanoseconds of
    /// cold shared memory, which a render block that does not need it is spared.
    /// Not inlinable: inlined into another module's real-time kernel, the
    /// libjack call would be one the compiler cannot check there, and release
    /// builds reject it; as a checked function of its own it can be called.
    public var cycleStartFrame: UInt32 {
        @_noAllocation @_noLocks get {
            guard let client else { return givenStartFrame }
            // A call into libjack, which the compiler cannot check (as with
            // `fetchPortBuffers`); RealtimeSanitizer and the allocation counter do.
            return _unsafePerformance { jack_last_frame_time(client) }
        }
    }

    /// A cycle over buffers the caller owns (off-line processing and tests).
    public init(frameCount: Int, inputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, cycleStartFrame: UInt32) {
        self.frameCount = frameCount
        self.inputs = inputs
        self.outputs = outputs
        client = nil
        givenStartFrame = cycleStartFrame
    }

    /// A cycle of `client`'s process callback.
    init(frameCount: Int, inputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
         outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, client: OpaquePointer) {
        self.frameCount = frameCount
        self.inputs = inputs
        self.outputs = outputs
        self.client = client
        givenStartFrame = 0
    }
}

/// The app's work for one cycle. Runs on JACK's real-time thread: it must not
/// allocate, lock, log or do I/O.
public typealias RenderBlock = (ProcessCycle) -> Void

/// The real-time side of a client: the port table, the preallocated buffer
/// pointer arrays and the render block, reached from the process trampoline
/// without retain or allocation. Built off the real-time thread, before
/// activation, for a fixed set of ports.
public final class RealtimeProcessor: @unchecked Sendable {
    let client: OpaquePointer
    /// One cache-line-aligned block holding, in order, the input port
    /// handles, the output port handles, the input buffer pointers and the
    /// output buffer pointers: the callback touches as few cache lines as it can.
    let table: UnsafeMutableRawPointer
    let inputPorts: UnsafeMutableBufferPointer<OpaquePointer>
    let outputPorts: UnsafeMutableBufferPointer<OpaquePointer>
    let inputBuffers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>
    let outputBuffers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>
    /// Zeros, handed out in place of the inputs while `silencesInputs` is set.
    let silence: UnsafeMutablePointer<Float>
    let render: RenderBlock
    /// Kept alive here; the cycle reaches it through `costRecorderHandle`
    /// without retaining it.
    let costRecorder: CycleCostRecorder?
    let costRecorderHandle: Unmanaged<CycleCostRecorder>?
    /// Cycles completed since activation (written only by the real-time thread).
    public let cyclesCompleted = Atomic<UInt64>(0)
    /// When set, the render block gets silence instead of the input port
    /// buffers (which belong to the ports feeding them and are never written).
    public let silencesInputs = Atomic<Bool>(false)
    /// Mute, gain and level watch applied to the outputs after the render block.
    public let outputStage = OutputStage()
    /// The largest period JACK allows, frames.
    static let maximumFrames = 8192

    /// A processor for these ports of `client`, calling `render` each cycle;
    /// with a `costRecorder`, each cycle's duration is recorded too.
    public init(client: Client, inputs: [Port], outputs: [Port], costRecorder: CycleCostRecorder? = nil,
                render: @escaping RenderBlock) {
        self.client = client.handle
        silence = .allocate(capacity: Self.maximumFrames)
        silence.initialize(repeating: 0, count: Self.maximumFrames)
        let slot = MemoryLayout<UnsafeRawPointer>.stride
        let portCount = inputs.count + outputs.count
        let block = UnsafeMutableRawPointer.allocate(byteCount: max(1, 2 * portCount) * slot, alignment: 64)
        table = block
        func slots<T>(_ offset: Int, _ count: Int, as type: T.Type) -> UnsafeMutableBufferPointer<T> {
            UnsafeMutableBufferPointer(start: (block + offset * slot).bindMemory(to: T.self, capacity: count), count: count)
        }
        inputPorts = slots(0, inputs.count, as: OpaquePointer.self)
        outputPorts = slots(inputs.count, outputs.count, as: OpaquePointer.self)
        inputBuffers = slots(portCount, inputs.count, as: UnsafeMutablePointer<Float>.self)
        outputBuffers = slots(portCount + inputs.count, outputs.count, as: UnsafeMutablePointer<Float>.self)
        _ = inputPorts.initialize(from: inputs.map(\.handle))
        _ = outputPorts.initialize(from: outputs.map(\.handle))
        inputBuffers.initialize(repeating: silence)
        outputBuffers.initialize(repeating: silence)
        self.render = render
        self.costRecorder = costRecorder
        costRecorderHandle = costRecorder.map { Unmanaged.passUnretained($0) }
    }

    deinit {
        table.deallocate()
        silence.deallocate()
    }

    /// One cycle: fetch the port buffers, run the render block, count.
    @inline(__always)
    func runCycle(frames: jack_nframes_t) {
        let started = costRecorder == nil ? 0 : cjack_monotonic_nanoseconds()
        fetchPortBuffers(inputPorts, into: inputBuffers, frames: frames)
        fetchPortBuffers(outputPorts, into: outputBuffers, frames: frames)
        if silencesInputs.load(ordering: .relaxed) {
            // Zeroed every cycle: the render block may have written into it.
            silence.update(repeating: 0, count: min(Int(frames), Self.maximumFrames))
            for index in inputBuffers.indices { inputBuffers[index] = silence }
        }
        render(ProcessCycle(
            frameCount: Int(frames),
            inputs: UnsafeBufferPointer(inputBuffers),
            outputs: UnsafeBufferPointer(outputBuffers),
            client: client))
        // One writer: a plain release store, no read-modify-write.
        let cycle = cyclesCompleted.load(ordering: .relaxed) &+ 1
        outputStage.apply(outputBuffers, frames: Int(frames), cycle: cycle)
        cyclesCompleted.store(cycle, ordering: .releasing)
        if let costRecorderHandle {
            let finished = cjack_monotonic_nanoseconds()
            costRecorderHandle._withUnsafeGuaranteedRef { $0.record(finished &- started) }
        }
    }

    /// Runs the real-time path once off-line with no ports fetched, so lazy
    /// metadata and globals are initialised before the first real cycle.
    func touchBeforeActivation() {
        _ = cyclesCompleted.load(ordering: .relaxed)
        costRecorder?.touch()
    }
}

/// Fills `buffers` with the JACK buffer of each port for this cycle. (A call
/// into libjack, so the compiler cannot check it: RealtimeSanitizer and the
/// allocation counter do.)
@inline(__always)
func fetchPortBuffers(_ ports: UnsafeMutableBufferPointer<OpaquePointer>,
                      into buffers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>,
                      frames: jack_nframes_t) {
    var index = 0
    while index < ports.count {
        buffers[index] = jack_port_get_buffer(ports[index], frames).assumingMemoryBound(to: Float.self)
        index += 1
    }
}

/// JACK's process callback: a top-level function, entered on the real-time
/// thread once per period; marks the thread as real-time for the sanitizer and
/// the allocation counter, and runs the processor without retaining it.
func processTrampoline(_ frames: jack_nframes_t, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    cjack_realtime_enter()
    Unmanaged<RealtimeProcessor>.fromOpaque(argument!)._withUnsafeGuaranteedRef { processor in
        processor.runCycle(frames: frames)
    }
    cjack_realtime_exit()
    return 0
}
