import JackKit
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
/// allocate, lock, log or do I/O. `@Sendable`: it is made on one thread and
/// called on another, so a block that captures and mutates a local variable
/// does not compile (keep such state in an object the block owns).
public typealias RenderBlock = @Sendable (ProcessCycle) -> Void

/// Everything the process callback reads and writes each cycle, at the head
/// of one cache-line-aligned block, followed in the same block by the output
/// stage's state, the input port handles, the output port handles, the input
/// buffer pointers and the output buffer pointers (the port tables).
/// libjack hands the callback this block's address:
/// every address the cycle needs is then an offset from it, so the cache
/// lines it touches (three at 2 channels) are adjacent and fetched in
/// parallel, not one after another through object references.
struct CycleState: ~Copyable {
    /// Called from `run`, a borrowing method, so without a retain of its
    /// context (copied out of the block first, it would cost two atomic
    /// operations every cycle).
    let render: RenderBlock
    let client: OpaquePointer
    let inputCount: Int
    let outputCount: Int
    let costRecorder: Unmanaged<CycleCostRecorder>?
    /// Zeros, handed out in place of the inputs while `silencesInputs` is set.
    let silence: UnsafeMutablePointer<Float>
    /// Cycles completed since activation (written only by the real-time thread).
    let cyclesCompleted = Atomic<UInt64>(0)
    let silencesInputs = Atomic<Bool>(false)
    /// Rung at the end of each cycle while a thread waits on it (`RealtimeProcessor.awaitCycles`).
    let bell = CycleBell()

    /// Where the output stage's state starts, bytes from the start of the block.
    static var outputStageOffset: Int { roundedUp(MemoryLayout<CycleState>.size, to: MemoryLayout<OutputStageState>.alignment) }
    /// Where the port tables start.
    static var tablesOffset: Int {
        roundedUp(outputStageOffset + MemoryLayout<OutputStageState>.size, to: MemoryLayout<UnsafeRawPointer>.alignment)
    }

    private static func roundedUp(_ bytes: Int, to alignment: Int) -> Int { (bytes + alignment - 1) / alignment * alignment }

    /// The output stage's state in `block`.
    @inline(__always)
    static func outputStage(in block: UnsafeMutableRawPointer) -> UnsafeMutablePointer<OutputStageState> {
        (block + outputStageOffset).assumingMemoryBound(to: OutputStageState.self)
    }

    /// The port tables in `block`, for a processor of `inputCount` inputs and `outputCount` outputs.
    @inline(__always)
    static func portTables(in block: UnsafeMutableRawPointer, inputCount: Int, outputCount: Int) -> PortTables {
        let slot = MemoryLayout<UnsafeRawPointer>.stride
        let tables = block + tablesOffset
        let portCount = inputCount + outputCount
        return PortTables(
            inputPorts: UnsafeMutableBufferPointer(
                start: tables.assumingMemoryBound(to: OpaquePointer.self), count: inputCount),
            outputPorts: UnsafeMutableBufferPointer(
                start: (tables + inputCount * slot).assumingMemoryBound(to: OpaquePointer.self), count: outputCount),
            inputBuffers: UnsafeMutableBufferPointer(
                start: (tables + portCount * slot).assumingMemoryBound(to: UnsafeMutablePointer<Float>.self),
                count: inputCount),
            outputBuffers: UnsafeMutableBufferPointer(
                start: (tables + (portCount + inputCount) * slot).assumingMemoryBound(to: UnsafeMutablePointer<Float>.self),
                count: outputCount))
    }
}

/// The four tables after a cycle block's header: port handles, then the
/// buffer pointers fetched for them each cycle.
struct PortTables {
    let inputPorts: UnsafeMutableBufferPointer<OpaquePointer>
    let outputPorts: UnsafeMutableBufferPointer<OpaquePointer>
    let inputBuffers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>
    let outputBuffers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>
}

/// The real-time side of a client: its cycle block (the port table, the
/// preallocated buffer pointer arrays, the render block and the output stage),
/// reached from the process trampoline without retain or allocation. Built
/// off the real-time thread, before activation, for a fixed set of ports.
public final class RealtimeProcessor: @unchecked Sendable { // its mutable state is the cycle block's atomics and the real-time thread's own fields
    let state: UnsafeMutablePointer<CycleState>
    /// Kept alive here; the cycle reaches it through the block without retaining it.
    let costRecorder: CycleCostRecorder?

    /// A processor for these ports of `client`, calling `render` each cycle;
    /// with a `costRecorder`, each cycle's duration is recorded too.
    public init(client: Client, inputs: [Port], outputs: [Port], costRecorder: CycleCostRecorder? = nil,
                render: @escaping RenderBlock) {
        let silence = UnsafeMutablePointer<Float>.allocate(capacity: JackPeriod.maximumFrames)
        silence.initialize(repeating: 0, count: JackPeriod.maximumFrames)
        let slot = MemoryLayout<UnsafeRawPointer>.stride
        let portCount = inputs.count + outputs.count
        let block = UnsafeMutableRawPointer.allocate(byteCount: CycleState.tablesOffset + 2 * portCount * slot,
                                                     alignment: 64)
        let tables = block + CycleState.tablesOffset
        tables.bindMemory(to: OpaquePointer.self, capacity: portCount)
        (tables + portCount * slot).bindMemory(to: UnsafeMutablePointer<Float>.self, capacity: portCount)
        let table = CycleState.portTables(in: block, inputCount: inputs.count, outputCount: outputs.count)
        _ = table.inputPorts.initialize(from: inputs.map(\.handle))
        _ = table.outputPorts.initialize(from: outputs.map(\.handle))
        table.inputBuffers.initialize(repeating: silence)
        table.outputBuffers.initialize(repeating: silence)
        (block + CycleState.outputStageOffset).bindMemory(to: OutputStageState.self, capacity: 1)
            .initialize(to: OutputStageState())
        state = block.bindMemory(to: CycleState.self, capacity: 1)
        self.costRecorder = costRecorder
        state.initialize(to: CycleState(render: render, client: client.handle, inputCount: inputs.count,
                                        outputCount: outputs.count, costRecorder: costRecorder.map { .passUnretained($0) },
                                        silence: silence))
    }

    deinit {
        let silence = state.pointee.silence
        CycleState.outputStage(in: callbackArgument).deinitialize(count: 1)
        state.deinitialize(count: 1)
        UnsafeMutableRawPointer(state).deallocate()
        silence.deallocate()
    }

    /// Cycles completed since activation.
    public var cyclesCompleted: UInt64 { state.pointee.cyclesCompleted.load(ordering: .acquiring) }

    /// Waits, off the real-time thread, until `condition` holds: it is
    /// looked at now, at the end of every cycle and after each
    /// `lookAgain()`, for at most `seconds`. What a cycle boundary changes
    /// (the graph jackd runs, the period) is seen within one period of the
    /// change, without polling. Whether it held.
    @discardableResult
    public func awaitCycles(within seconds: Double, until condition: () -> Bool) -> Bool {
        state.pointee.bell.wait(seconds: seconds, until: condition)
    }

    /// From any thread: threads in `awaitCycles` look at their condition
    /// again now (it changed between cycles, e.g. in a latency callback).
    public func lookAgain() { state.pointee.bell.ring() }

    /// Whether the render block gets silence instead of the input port
    /// buffers (which belong to the ports feeding them and are never written).
    public var silencesInputs: Bool { state.pointee.silencesInputs.load(ordering: .acquiring) }

    /// Gives the render block silence instead of the inputs from the next cycle on, or the inputs again.
    public func setSilencesInputs(_ silences: Bool) { state.pointee.silencesInputs.store(silences, ordering: .releasing) }

    /// Mute, gain and level watch applied to the outputs after the render block.
    public var outputStage: OutputStage { OutputStage(owner: self) }

    var outputStageState: UnsafeMutablePointer<OutputStageState> { CycleState.outputStage(in: callbackArgument) }

    /// What libjack hands the process callback: the cycle block.
    var callbackArgument: UnsafeMutableRawPointer { UnsafeMutableRawPointer(state) }

    /// Runs the real-time path's lazy initialisations once off-line, before the first real cycle.
    func touchBeforeActivation() {
        _ = state.pointee.cyclesCompleted.load(ordering: .relaxed)
        costRecorder?.touch()
    }
}

extension CycleState {
    /// One cycle: fetch the port buffers, run the render block, apply the
    /// output stage, count. `block` is the cycle block this state heads.
    @inline(__always)
    borrowing func run(in block: UnsafeMutableRawPointer, frames: jack_nframes_t) {
        let started = costRecorder == nil ? 0 : cjack_monotonic_nanoseconds()
        let table = Self.portTables(in: block, inputCount: inputCount, outputCount: outputCount)
        let inputBuffers = table.inputBuffers, outputBuffers = table.outputBuffers
        fetchPortBuffers(table.inputPorts, into: inputBuffers, frames: frames)
        fetchPortBuffers(table.outputPorts, into: outputBuffers, frames: frames)
        if silencesInputs.load(ordering: .relaxed) {
            // Zeroed every cycle: the render block may have written into it.
            silence.update(repeating: 0, count: min(Int(frames), JackPeriod.maximumFrames))
            for index in inputBuffers.indices { inputBuffers[index] = silence }
        }
        render(ProcessCycle(frameCount: Int(frames), inputs: UnsafeBufferPointer(inputBuffers),
                            outputs: UnsafeBufferPointer(outputBuffers), client: client))
        // One writer: a plain release store, no read-modify-write.
        let count = cyclesCompleted.load(ordering: .relaxed) &+ 1
        Self.outputStage(in: block).pointee.process(outputBuffers, frames: Int(frames), cycle: count)
        cyclesCompleted.store(count, ordering: .releasing)
        bell.cycleEnded()
        if let costRecorder {
            let finished = cjack_monotonic_nanoseconds()
            costRecorder._withUnsafeGuaranteedRef { $0.record(finished &- started) }
        }
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
/// thread once per period with the processor's cycle block; marks the thread
/// as real-time for the sanitizer and the allocation counter, and runs the cycle.
func processTrampoline(_ frames: jack_nframes_t, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    cjack_realtime_enter()
    argument!.assumingMemoryBound(to: CycleState.self).pointee.run(in: argument!, frames: frames)
    cjack_realtime_exit()
    return 0
}
