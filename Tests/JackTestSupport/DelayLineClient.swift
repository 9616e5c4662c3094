import Foundation
import JackKit
import JackRuntime
import Synchronization

/// A JACK client that puts a known delay into a path: `NAME:in` → `NAME:out`
/// through a windowed-sinc fractional-delay filter of `delay` frames
/// (integer and fraction), optionally inverting, and able to stall its
/// process callback once to force an xrun.
///
/// The filter is h[n] = sinc(n − delay)·w(n − delay) for n in 0..<taps, with a
/// Blackman window centred on the delay: its delay is `delay` frames to far
/// better than 0.001 frame in the band the latency tones use (up to fs/8).
public final class DelayLineClient: @unchecked Sendable {
    public let name: String
    public let delay: Double
    let client: Client
    let line: DelayLine

    /// Opens `name` on `serverName` with ports `in` and `out` and activates it.
    public init(name: String, serverName: String, delay: Double, inverting: Bool = false) throws {
        precondition(delay >= 16, "keep at least 16 frames of filter before the centre")
        self.name = name
        self.delay = delay
        client = try Client(name: name, serverName: serverName)
        let input = try client.registerPort("in", flags: .input)
        let output = try client.registerPort("out", flags: .output)
        line = DelayLine(coefficients: Self.coefficients(delay: delay, gain: inverting ? -1 : 1))
        try client.setProcessor(RealtimeProcessor(client: client, inputs: [input], outputs: [output],
                                                  render: line.renderBlock))
        try client.activate()
    }

    deinit { client.close() }

    /// Makes the next process callback sleep `seconds`: the server misses its deadline.
    public func stall(seconds: Double) {
        line.stallMicroseconds.store(Int(seconds * 1_000_000), ordering: .releasing)
    }

    /// Connects `source` → `NAME:in`.
    public func listen(to source: String) throws {
        try client.connect(source, to: "\(name):in")
    }

    static func coefficients(delay: Double, gain: Double) -> [Float] {
        let halfWidth = 16.0
        let taps = Int((delay + halfWidth).rounded(.up)) + 1
        return (0..<taps).map { n in
            let x = Double(n) - delay
            guard abs(x) < halfWidth else { return 0 }
            let sinc = x == 0 ? 1 : sin(.pi * x) / (.pi * x)
            let t = (x + halfWidth) / (2 * halfWidth)
            let window = 0.42 - 0.5 * cos(2 * .pi * t) + 0.08 * cos(4 * .pi * t)
            return Float(gain * sinc * window)
        }
    }
}

/// The filter's real-time half: a history of past input and a direct-form FIR.
final class DelayLine: @unchecked Sendable {
    let coefficients: UnsafeMutableBufferPointer<Float>
    let history: UnsafeMutableBufferPointer<Float>
    var position = 0
    let stallMicroseconds = Atomic<Int>(0)

    init(coefficients: [Float]) {
        self.coefficients = .allocate(capacity: coefficients.count)
        _ = self.coefficients.initialize(from: coefficients)
        history = .allocate(capacity: coefficients.count)
        history.initialize(repeating: 0)
    }

    deinit {
        coefficients.deallocate()
        history.deallocate()
    }

    var renderBlock: RenderBlock { { cycle in self.process(cycle) } }

    func process(_ cycle: ProcessCycle) {
        let stall = stallMicroseconds.exchange(0, ordering: .acquiringAndReleasing)
        if stall > 0 { usleep(UInt32(stall)) }
        let input = cycle.inputs[0]
        let output = cycle.outputs[0]
        let taps = coefficients.count
        for frame in 0..<cycle.frameCount {
            history[position] = input[frame]
            var sum: Double = 0
            var index = position
            for tap in 0..<taps {
                sum += Double(coefficients[tap]) * Double(history[index])
                index = index == 0 ? taps - 1 : index - 1
            }
            output[frame] = Float(sum)
            position = position + 1 == taps ? 0 : position + 1
        }
    }
}
