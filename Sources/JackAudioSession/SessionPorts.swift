import Glibc
import JackKit
import Synchronization

/// The JACK ports one activation of a session registered and what they are
/// connected to. Immutable: a new activation builds a new one.
final class SessionPorts: Sendable {
    /// The session's input ports, channel order (`in_1`, `in_2`, ...).
    let inputs: [Port]
    /// The session's output ports, channel order (`out_1`, `out_2`, ...).
    let outputs: [Port]
    /// Frames the session itself adds between its inputs and outputs
    /// (zero in measurement mode).
    let addedLatencyFrames: Int
    /// The calibrated correction for the hardware ports the session is connected to.
    let correction = Mutex(LatencyCorrection.none)
    /// Whether the session's latency callback sets the ports' ranges
    /// (`reportLatency`); otherwise libjack's propagation does.
    let setsOwnRanges: Bool
    /// A port of the server by its full name (through the session's client).
    private let portNamed: @Sendable (String) -> Port?

    init(inputs: [Port], outputs: [Port], addedLatencyFrames: Int, setsOwnRanges: Bool,
         portNamed: @escaping @Sendable (String) -> Port?) {
        self.inputs = inputs
        self.outputs = outputs
        self.addedLatencyFrames = addedLatencyFrames
        self.setsOwnRanges = setsOwnRanges
        self.portNamed = portNamed
    }

    /// Sets the session's own ports' ranges in JACK's latency callback: each
    /// input's capture range (each output's playback range) is that of the
    /// ports it is connected to, plus the calibrated correction, and what
    /// arrives at the inputs leaves the outputs `addedLatencyFrames` later,
    /// so clients downstream of the session see exact totals. Read from the
    /// connected ports, not from the session's own: jack2 sets those from the
    /// connections before the callback, but PipeWire's libjack hands back what
    /// the callback set last time, and the correction then grew at every call.
    func reportLatency(_ mode: LatencyMode) {
        let correction = correction.withLock { $0 }
        switch mode {
        case .capture:
            guard !inputs.isEmpty else { return }
            let range = connectedRange(inputs, .capture) ?? .zero
            let corrected = range.adding(correction.captureFrames)
            for port in inputs { port.setLatencyRange(corrected, .capture) }
            // Downstream clients see the corrected total. Not on PipeWire:
            // where the outputs come back to the inputs through a node that
            // carries latency on (a null sink and its monitor), the correction
            // would be added again at every pass.
            let passedOn = LibraryVersion.isPipeWire ? range : corrected
            for port in outputs { port.setLatencyRange(passedOn.adding(addedLatencyFrames), .capture) }
        case .playback:
            guard !outputs.isEmpty else { return }
            let range = connectedRange(outputs, .playback) ?? .zero
            let corrected = range.adding(correction.playbackFrames)
            for port in outputs { port.setLatencyRange(corrected, .playback) }
            let passedOn = LibraryVersion.isPipeWire ? range : corrected
            for port in inputs { port.setLatencyRange(passedOn.adding(addedLatencyFrames), .playback) }
        }
    }

    /// Capture latency of the session's inputs, frames: what its latency
    /// callback gives them (the range of the ports they are connected to,
    /// plus the correction); nil when none is connected.
    var inputLatencyRange: LatencyRange? {
        connectedRange(inputs, .capture)?.adding(correction.withLock { $0.captureFrames })
    }

    /// Playback latency of the session's outputs, frames; nil when none is connected.
    var outputLatencyRange: LatencyRange? {
        connectedRange(outputs, .playback)?.adding(correction.withLock { $0.playbackFrames })
    }

    /// Whether JACK holds for each connected port of the session the range
    /// its latency callback gives it (without the callback, libjack's range
    /// of the ports it is connected to, which lacks a correction stored
    /// since the client opened: not settled then). Not while JACK has not
    /// run a latency pass since the connections changed; and not at all
    /// where the session's ports are part of a cycle in the graph (its outputs come back to its
    /// inputs through jackd's `-L` loopback ports): jackd calls latency
    /// callbacks in graph order, and a client in a cycle has none, so its
    /// ports keep reading 0 (seen on jackd2 1.9.21 in about one start in three).
    var latencyIsSettled: Bool {
        guard setsOwnRanges else {
            let correction = correction.withLock { $0 }
            let corrected = inputs.map { ($0, LatencyMode.capture, correction.captureFrames) }
                + outputs.map { ($0, LatencyMode.playback, correction.playbackFrames) }
            return corrected.allSatisfy { port, mode, frames in
                let connected = Self.union(port.connections.compactMap { portNamed($0)?.latencyRange(mode) })
                return connected.map { port.latencyRange(mode) == $0.adding(frames) } ?? true
            }
        }
        func settled(_ ports: [Port], _ mode: LatencyMode, _ expected: LatencyRange?) -> Bool {
            guard let expected else { return true }
            return ports.allSatisfy { $0.connections.isEmpty || $0.latencyRange(mode) == expected }
        }
        return settled(inputs, .capture, inputLatencyRange) && settled(outputs, .playback, outputLatencyRange)
    }

    /// Waits, at most `seconds`, until the graph jackd runs holds the plan's
    /// connections of the session's ports (a connect changes the graph a
    /// cycle later); ports the plan names that are gone are not waited for.
    /// libjack's latency propagation reads the running graph.
    func awaitRunning(_ plan: RoutePlan, within seconds: Double) {
        let wanted = zip(inputs, plan.inputPorts).map { ($0, $1) }
            + zip(outputs, plan.outputPorts).compactMap { port, destination in destination.map { (port, $0) } }
        let deadline = MonotonicClock.nanoseconds + UInt64(seconds * 1e9)
        while wanted.contains(where: { port, other in portNamed(other) != nil && !port.connections.contains(other) }),
              MonotonicClock.nanoseconds < deadline {
            usleep(1_000)
        }
    }

    /// The union of the ranges of the ports `ports` are connected to; nil when none is.
    private func connectedRange(_ ports: [Port], _ mode: LatencyMode) -> LatencyRange? {
        Self.union(ports.flatMap { port in port.connections.compactMap { portNamed($0)?.latencyRange(mode) } })
    }

    static func union(_ ranges: [LatencyRange]) -> LatencyRange? {
        guard let first = ranges.first else { return nil }
        return ranges.dropFirst().reduce(first) { $0.union($1) }
    }
}
