import Foundation
import JackKit
import JackRuntime
import Synchronization

/// A JACK client that records what arrives from some ports, cycle by cycle
/// with each cycle's frame time, into storage preallocated for the whole run;
/// the comparison runs afterwards. Listens to `sources` through its own
/// input ports `in_1`…, one per source.
public final class PortCapture: @unchecked Sendable {
    /// The ports listened to, in channel order.
    public let sources: [String]
    let client: Client
    let recorder: Recorder

    final class Recorder: @unchecked Sendable {
        let channels: Int
        let capacity: Int
        let period: Int
        let samples: UnsafeMutableBufferPointer<Float>
        let starts: UnsafeMutableBufferPointer<UInt32>
        let recorded = Atomic<Int>(0)
        let armed = Atomic<Bool>(false)

        init(channels: Int, period: Int, cycles: Int) {
            self.channels = channels
            self.period = period
            capacity = cycles
            samples = .allocate(capacity: channels * period * cycles)
            samples.initialize(repeating: 0)
            starts = .allocate(capacity: cycles)
            starts.initialize(repeating: 0)
        }

        deinit {
            samples.deallocate()
            starts.deallocate()
        }

        @_noAllocation @_noLocks
        func process(_ cycle: ProcessCycle) {
            let armed = armed.load(ordering: .acquiring)
            let index = recorded.load(ordering: .relaxed)
            guard armed, index < capacity, cycle.frameCount == period else { return }
            var channel = 0
            while channel < channels {
                let base = samples.baseAddress! + (index * channels + channel) * period
                let input = cycle.inputs[channel]
                var frame = 0
                while frame < period {
                    base[frame] = input[frame]
                    frame += 1
                }
                channel += 1
            }
            starts[index] = cycle.cycleStartFrame
            recorded.store(index + 1, ordering: .releasing)
        }
    }

    /// Opens the client on `serverName`, connected to `sources`, with room
    /// for `cycles` cycles of `period` frames.
    public init(name: String = "port-capture", serverName: String, sources: [String], period: Int, cycles: Int) throws {
        self.sources = sources
        client = try Client(name: name, serverName: serverName)
        recorder = Recorder(channels: sources.count, period: period, cycles: cycles)
        let inputs = try sources.indices.map { try client.registerPort("in_\($0 + 1)", flags: .input) }
        let recorder = recorder
        try client.setProcessor(RealtimeProcessor(client: client, inputs: inputs, outputs: []) { recorder.process($0) })
        try client.activate()
        for (source, input) in zip(sources, inputs) { try client.connect(source, to: input.name) }
    }

    deinit { client.close() }

    /// Starts recording at the next cycle.
    public func arm() { recorder.armed.store(true, ordering: .releasing) }

    /// Waits until the storage is full (false after `timeout` seconds).
    public func waitUntilFull(timeout: Double = 20) -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while recorder.recorded.load(ordering: .acquiring) < recorder.capacity {
            if ContinuousClock.now > deadline { return false }
            usleep(10_000)
        }
        return true
    }

    /// How one channel compares with what was sent.
    public struct Comparison: Equatable, CustomStringConvertible {
        /// Frames between sending and arriving (nil: no delay up to the limit fits).
        public var delayFrames: Int?
        /// Samples compared.
        public var compared: Int
        /// Samples that differ from what was sent `delayFrames` earlier.
        public var mismatches: Int

        public var description: String {
            "delay \(delayFrames.map(String.init) ?? "none") frames, \(compared) samples compared, \(mismatches) differ"
        }
    }

    /// Compares channel `channel` with `sent(frameTime)`, the sample sent at
    /// that JACK frame time: finds the one delay (whole frames up to
    /// `maximumDelay`) at which the first recorded cycle matches, then checks
    /// every recorded sample at it.
    public func compare(channel: Int, maximumDelay: Int, sent: (UInt32) -> Float) -> Comparison {
        let cycles = recorder.recorded.load(ordering: .acquiring)
        let period = recorder.period
        func sample(_ cycle: Int, _ frame: Int) -> Float {
            recorder.samples[(cycle * recorder.channels + channel) * period + frame]
        }
        guard cycles > 0 else { return Comparison(delayFrames: nil, compared: 0, mismatches: 0) }
        let delay = (0...maximumDelay).first { delay in
            (0..<period).allSatisfy { frame in
                sample(0, frame) == sent(recorder.starts[0] &+ UInt32(frame) &- UInt32(delay))
            }
        }
        guard let delay else { return Comparison(delayFrames: nil, compared: 0, mismatches: cycles * period) }
        var mismatches = 0
        for cycle in 0..<cycles {
            for frame in 0..<period where sample(cycle, frame) != sent(recorder.starts[cycle] &+ UInt32(frame) &- UInt32(delay)) {
                mismatches += 1
            }
        }
        return Comparison(delayFrames: delay, compared: cycles * period, mismatches: mismatches)
    }

    /// The largest magnitude recorded on `channel`.
    public func peak(channel: Int) -> Float {
        let cycles = recorder.recorded.load(ordering: .acquiring)
        var peak: Float = 0
        for cycle in 0..<cycles {
            let base = (cycle * recorder.channels + channel) * recorder.period
            for frame in 0..<recorder.period { peak = max(peak, abs(recorder.samples[base + frame])) }
        }
        return peak
    }
}
