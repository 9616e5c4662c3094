import Foundation
import JackKit
import JackRuntime
import Synchronization

/// A JACK client that listens to ports and measures their RMS level over a
/// window of time, for tests that judge what was heard on a loopback.
public final class LevelProbe: @unchecked Sendable {
    let client: Client
    let meter: LevelAccumulator
    public let sources: [String]
    /// Xruns the server reported since the probe started.
    public var xruns: Int { meter.xruns.load(ordering: .relaxed) }

    /// Opens `name` with one input per source port, connected to it.
    public init(name: String = "level-probe", serverName: String, listeningTo sources: [String]) throws {
        self.sources = sources
        let client = try Client(name: name, serverName: serverName)
        self.client = client
        let inputs = try sources.indices.map { try client.registerPort("in_\($0 + 1)", flags: .input) }
        meter = LevelAccumulator(channels: sources.count)
        let meter = meter
        try client.setEventHandler { event in if case .xrun = event { meter.xruns.add(1, ordering: .relaxed) } }
        try client.setProcessor(RealtimeProcessor(client: client, inputs: inputs, outputs: [], render: meter.renderBlock))
        try client.activate()
        for (index, source) in sources.enumerated() { try client.connect(source, to: "\(name):in_\(index + 1)") }
    }

    deinit { client.close() }

    /// The JACK frame times of the first and the last audible cycle (peak above
    /// −60 dBFS) of each source since the probe started, or nil.
    public func audibleSpans() -> [(first: Int64, last: Int64)?] {
        meter.spans()
    }

    /// The steady level of each source over the next `seconds`: the median
    /// of its cycles' RMS levels, so that a cycle a loaded machine spoilt
    /// does not count (a client late in jackd's asynchronous mode is heard
    /// half-written: a ducked player's sine before its gain was applied, a
    /// single cycle 20 dB louder, seen beside a busy core); read again (up
    /// to `attempts` times) while the server reports an xrun during it.
    public func levelsWithoutXruns(over seconds: Double = 0.3, attempts: Int = 3) -> [Double] {
        var result: [Double] = []
        for _ in 0..<attempts {
            let before = xruns
            let first = meter.cyclesSeen
            usleep(UInt32(seconds * 1_000_000))
            result = meter.medianLevels(cycles: first..<meter.cyclesSeen)
            if xruns == before { break }
        }
        return result
    }

    /// The RMS level of each source over the next `seconds`, dBFS (−200 for silence).
    public func levels(over seconds: Double = 0.3) -> [Double] {
        let before = meter.snapshot()
        usleep(UInt32(seconds * 1_000_000))
        let after = meter.snapshot()
        return zip(before, after).map { first, second in
            let frames = Double(second.frames - first.frames)
            guard frames > 0 else { return -200 }
            let meanSquare = (second.sumOfSquares - first.sumOfSquares) / frames
            return meanSquare > 1e-20 ? 10 * log10(meanSquare) : -200
        }
    }
}

/// Per channel, a running sum of squares and a frame count, written by the
/// real-time thread and read by the test.
final class LevelAccumulator: @unchecked Sendable {
    let channels: Int
    let frames = Atomic<Int>(0)
    /// Xruns reported to the probe's client.
    let xruns = Atomic<Int>(0)

    init(channels: Int) {
        self.channels = channels
        storage = .allocate(capacity: channels)
        storage.initialize(repeating: 0, count: channels)
        cycleMeanSquares = .allocate(capacity: channels * Self.cycleCapacity)
        cycleMeanSquares.initialize(repeating: 0, count: channels * Self.cycleCapacity)
        firstAudible = .allocate(capacity: channels)
        firstAudible.initialize(repeating: -1, count: channels)
        lastAudible = .allocate(capacity: channels)
        lastAudible.initialize(repeating: -1, count: channels)
    }

    deinit {
        storage.deallocate()
        cycleMeanSquares.deallocate()
        firstAudible.deallocate()
        lastAudible.deallocate()
    }

    private let firstAudible: UnsafeMutablePointer<Int64>
    private let lastAudible: UnsafeMutablePointer<Int64>

    /// Double sums stored as bit patterns (one writer).
    private let storage: UnsafeMutablePointer<Double>
    private let sequence = Atomic<Int>(0)
    /// Each cycle's mean square per channel, the last `cycleCapacity` cycles (cycle-major).
    private let cycleMeanSquares: UnsafeMutablePointer<Double>
    static let cycleCapacity = 8192
    private let cyclesWritten = Atomic<Int>(0)

    /// Cycles heard since the probe started.
    var cyclesSeen: Int { cyclesWritten.load(ordering: .acquiring) }

    /// The median over `cycles` of each channel's cycle levels, dBFS (−200:
    /// silence or no cycle). Only the last `cycleCapacity` cycles are kept.
    func medianLevels(cycles: Range<Int>) -> [Double] {
        let kept = max(cycles.lowerBound, cyclesSeen - Self.cycleCapacity + 1)..<cycles.upperBound
        return (0..<channels).map { channel in
            let levels = kept.map { cycleMeanSquares[($0 % Self.cycleCapacity) * channels + channel] }.sorted()
            guard !levels.isEmpty else { return -200 }
            let meanSquare = levels[levels.count / 2]
            return meanSquare > 1e-20 ? 10 * log10(meanSquare) : -200
        }
    }

    var renderBlock: RenderBlock { { cycle in self.process(cycle) } }

    func process(_ cycle: ProcessCycle) {
        // Seqlock: odd while writing.
        sequence.add(1, ordering: .acquiringAndReleasing)
        for channel in 0..<min(channels, cycle.inputs.count) {
            var sum = 0.0
            var peak: Float = 0
            let buffer = cycle.inputs[channel]
            for frame in 0..<cycle.frameCount {
                sum += Double(buffer[frame]) * Double(buffer[frame])
                peak = max(peak, abs(buffer[frame]))
            }
            storage[channel] += sum
            cycleMeanSquares[(cyclesWritten.load(ordering: .relaxed) % Self.cycleCapacity) * channels + channel] =
                cycle.frameCount > 0 ? sum / Double(cycle.frameCount) : 0
            if peak > 0.001 {
                let start = Int64(cycle.cycleStartFrame)
                if firstAudible[channel] < 0 { firstAudible[channel] = start }
                lastAudible[channel] = start
            }
        }
        frames.add(cycle.frameCount, ordering: .relaxed)
        cyclesWritten.add(1, ordering: .releasing)
        sequence.add(1, ordering: .acquiringAndReleasing)
    }

    func spans() -> [(first: Int64, last: Int64)?] {
        while true {
            let start = sequence.load(ordering: .acquiring)
            if start & 1 == 1 { continue }
            let values = (0..<channels).map { firstAudible[$0] < 0 ? nil : (firstAudible[$0], lastAudible[$0]) }
            if sequence.load(ordering: .acquiring) == start { return values }
        }
    }

    func snapshot() -> [(sumOfSquares: Double, frames: Int)] {
        while true {
            let start = sequence.load(ordering: .acquiring)
            if start & 1 == 1 { continue }
            let values = (0..<channels).map { storage[$0] }
            let count = frames.load(ordering: .acquiring)
            if sequence.load(ordering: .acquiring) == start { return values.map { ($0, count) } }
        }
    }
}
