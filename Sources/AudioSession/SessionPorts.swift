import JackKit
import Synchronization

/// The JACK ports one activation of a session registered and what they are
/// connected to. Immutable: a new activation builds a new one.
final class SessionPorts: @unchecked Sendable {
    /// The session's input ports, channel order (`in_1`, `in_2`, ...).
    let inputs: [Port]
    /// The session's output ports, channel order (`out_1`, `out_2`, ...).
    let outputs: [Port]
    /// Frames the session itself adds between its inputs and outputs
    /// (zero in measurement mode).
    let addedLatencyFrames: Int
    /// The calibrated correction for the hardware ports the session is connected to.
    let correction = Mutex(LatencyCorrection.none)

    init(inputs: [Port], outputs: [Port], addedLatencyFrames: Int) {
        self.inputs = inputs
        self.outputs = outputs
        self.addedLatencyFrames = addedLatencyFrames
    }

    /// Sets the session's own ports' ranges in JACK's latency callback. JACK
    /// has just set each input's capture range (each output's playback range)
    /// from its connections; the calibrated correction is added to it, and
    /// what arrives at the inputs leaves the outputs `addedLatencyFrames`
    /// later, so clients downstream of the session see exact totals.
    func reportLatency(_ mode: LatencyMode) {
        let correction = correction.withLock { $0 }
        switch mode {
        case .capture:
            guard let range = Self.union(inputs.map { $0.latencyRange(.capture) }) else { return }
            let corrected = range.adding(correction.captureFrames)
            for port in inputs { port.setLatencyRange(corrected, .capture) }
            for port in outputs { port.setLatencyRange(corrected.adding(addedLatencyFrames), .capture) }
        case .playback:
            guard let range = Self.union(outputs.map { $0.latencyRange(.playback) }) else { return }
            let corrected = range.adding(correction.playbackFrames)
            for port in outputs { port.setLatencyRange(corrected, .playback) }
            for port in inputs { port.setLatencyRange(corrected.adding(addedLatencyFrames), .playback) }
        }
    }

    /// Capture latency of the session's inputs: the range JACK computed from
    /// the ports they are connected to, frames.
    var inputLatencyRange: LatencyRange {
        Self.union(inputs.map { $0.latencyRange(.capture) }) ?? .zero
    }

    /// Playback latency of the session's outputs, frames.
    var outputLatencyRange: LatencyRange {
        Self.union(outputs.map { $0.latencyRange(.playback) }) ?? .zero
    }

    static func union(_ ranges: [LatencyRange]) -> LatencyRange? {
        guard let first = ranges.first else { return nil }
        return ranges.dropFirst().reduce(first) { $0.union($1) }
    }
}
