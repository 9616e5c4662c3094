import JackKit

/// A JACK port as the session's latency rules see it: whom it is connected
/// to and the ranges JACK holds for it. `Port` is one; the rules' tests hold
/// ports in memory.
protocol LatencyPort {
    /// Full names of the ports it is connected to.
    var connections: [String] { get }
    /// The range JACK holds for it, frames.
    func latencyRange(_ mode: LatencyMode) -> LatencyRange
    /// Sets its range (inside JACK's latency callback).
    func setLatencyRange(_ range: LatencyRange, _ mode: LatencyMode)
}

extension Port: LatencyPort {}

/// The latency the session reports for its own ports: each input's capture
/// range (each output's playback range) is that of the ports it is connected
/// to, plus the calibrated correction, and what arrives at the inputs leaves
/// the outputs `addedLatencyFrames` later, so clients downstream see exact
/// totals. Decided from what the ports answer, nothing else.
struct OwnPortLatency<P: LatencyPort> {
    /// The session's input ports, channel order.
    let inputs: [P]
    /// The session's output ports, channel order.
    let outputs: [P]
    /// Frames the session adds between its inputs and outputs.
    let addedLatencyFrames: Int
    let correction: LatencyCorrection
    /// Whether the corrected range is passed on through the session to the
    /// other side (false on PipeWire: where the outputs come back to the
    /// inputs through a node that carries latency on, a null sink and its
    /// monitor, the correction would be added again at every pass).
    let passesCorrectionOn: Bool
    /// A port of the server by its full name.
    let portNamed: (String) -> P?

    /// Sets the ranges of the session's ports for JACK's latency callback.
    /// Read from the connected ports, not the session's own: jack2 sets those
    /// from the connections before the callback, but PipeWire's libjack hands
    /// back what the callback set last time, and the correction then grew at every call.
    func report(_ mode: LatencyMode) {
        let (own, other, frames) = mode == .capture ? (inputs, outputs, correction.captureFrames)
            : (outputs, inputs, correction.playbackFrames)
        guard !own.isEmpty else { return }
        let range = connectedRange(own, mode) ?? .zero
        let corrected = range.adding(frames)
        for port in own { port.setLatencyRange(corrected, mode) }
        let passedOn = passesCorrectionOn ? corrected : range
        for port in other { port.setLatencyRange(passedOn.adding(addedLatencyFrames), mode) }
    }

    /// Capture latency of the inputs: the connected ports' range plus the correction; nil when none is connected.
    var inputRange: LatencyRange? { connectedRange(inputs, .capture)?.adding(correction.captureFrames) }

    /// Playback latency of the outputs; nil when none is connected.
    var outputRange: LatencyRange? { connectedRange(outputs, .playback)?.adding(correction.playbackFrames) }

    /// Whether JACK holds for each connected port of the session the range
    /// the latency callback gives it (`setsOwnRanges`), or else libjack's
    /// propagated range (the connected ports' range, which lacks a correction
    /// stored since the client opened: not settled then).
    func isSettled(setsOwnRanges: Bool) -> Bool {
        guard setsOwnRanges else {
            let corrected = inputs.map { ($0, LatencyMode.capture, correction.captureFrames) }
                + outputs.map { ($0, LatencyMode.playback, correction.playbackFrames) }
            return corrected.allSatisfy { port, mode, frames in
                let connected = Self.union(port.connections.compactMap { portNamed($0)?.latencyRange(mode) })
                return connected.map { port.latencyRange(mode) == $0.adding(frames) } ?? true
            }
        }
        func settled(_ ports: [P], _ mode: LatencyMode, _ expected: LatencyRange?) -> Bool {
            guard let expected else { return true }
            return ports.allSatisfy { $0.connections.isEmpty || $0.latencyRange(mode) == expected }
        }
        return settled(inputs, .capture, inputRange) && settled(outputs, .playback, outputRange)
    }

    /// The union of the ranges of the ports `ports` are connected to; nil when none is.
    private func connectedRange(_ ports: [P], _ mode: LatencyMode) -> LatencyRange? {
        Self.union(ports.flatMap { port in port.connections.compactMap { portNamed($0)?.latencyRange(mode) } })
    }

    static func union(_ ranges: [LatencyRange]) -> LatencyRange? {
        guard let first = ranges.first else { return nil }
        return ranges.dropFirst().reduce(first) { $0.union($1) }
    }
}
