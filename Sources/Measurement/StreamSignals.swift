import JackAudioSession
import JackKit
import JackRuntime

/// A multiRoute player's real-time source: one signal generator per output
/// stream, each writing only into its own stream's buffers.
public final class StreamSignals: @unchecked Sendable { // its table is built before activation and only read after
    /// The generators, in the order of the streams given.
    public let generators: [SignalGenerator]
    /// Each generator with its stream's output indices, in plain memory, so
    /// the real-time code neither retains nor releases anything.
    let table: UnsafeMutableBufferPointer<(generator: Unmanaged<SignalGenerator>, indices: Range<Int>)>

    /// Plays each generator into its stream.
    public init(_ pairs: [(generator: SignalGenerator, stream: AudioOutputStream)]) {
        generators = pairs.map(\.generator)
        table = .allocate(capacity: pairs.count)
        _ = table.initialize(from: pairs.map { (Unmanaged.passUnretained($0.generator), $0.stream.outputIndices) })
    }

    /// One generator playing into every output of the session.
    public init(allOutputs generator: SignalGenerator) {
        generators = [generator]
        table = .allocate(capacity: 1)
        table.initialize(repeating: (Unmanaged.passUnretained(generator), 0..<Int.max))
    }

    deinit { table.deallocate() }

    /// Pauses (silence) or resumes every stream.
    public func setPaused(_ pause: Bool) {
        for generator in generators { generator.setPaused(pause) }
    }

    /// The render block for the session.
    public var renderBlock: RenderBlock { { cycle in self.process(cycle) } }

    /// One cycle, on JACK's real-time thread.
    @_noAllocation @_noLocks
    public func process(_ cycle: ProcessCycle) {
        var index = 0
        while index < table.count {
            let entry = table[index]
            let outputs = cycle.outputs(in: entry.indices)
            entry.generator._withUnsafeGuaranteedRef { $0.render(into: outputs, frames: cycle.frameCount) }
            index += 1
        }
    }
}
