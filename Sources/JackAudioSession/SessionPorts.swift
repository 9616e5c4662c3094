import JackKit
import JackRuntime
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

    /// The latency rules over these ports, with the correction as it is now.
    private var latency: OwnPortLatency<Port> {
        OwnPortLatency(inputs: inputs, outputs: outputs, addedLatencyFrames: addedLatencyFrames,
                       correction: correction.withLock { $0 }, passesCorrectionOn: !LibraryVersion.isPipeWire,
                       portNamed: portNamed)
    }

    /// Sets the session's own ports' ranges in JACK's latency callback (`OwnPortLatency.report`).
    func reportLatency(_ mode: LatencyMode) { latency.report(mode) }

    /// Capture latency of the session's inputs, frames: what its latency
    /// callback gives them; nil when none is connected.
    var inputLatencyRange: LatencyRange? { latency.inputRange }

    /// Playback latency of the session's outputs, frames; nil when none is connected.
    var outputLatencyRange: LatencyRange? { latency.outputRange }

    /// Whether JACK holds for each connected port of the session the range
    /// it should (`OwnPortLatency.isSettled`). Not while JACK has not run a
    /// latency pass since the connections changed; and not at all where the
    /// session's ports are part of a cycle in the graph (its outputs come back
    /// to its inputs through jackd's `-L` loopback ports): jackd calls latency
    /// callbacks in graph order, and a client in a cycle has none, so its
    /// ports keep reading 0 (seen on jackd2 1.9.21 in about one start in three).
    var latencyIsSettled: Bool { latency.isSettled(setsOwnRanges: setsOwnRanges) }

    /// Waits, at most `seconds`, until the graph jackd runs holds the plan's
    /// connections of the session's ports (a connect changes the graph a
    /// cycle later); ports the plan names that are gone are not waited for.
    /// libjack's latency propagation reads the running graph. It looks at
    /// the end of each of `processor`'s cycles, when the graph may have changed.
    func awaitRunning(_ plan: RoutePlan, within seconds: Double, on processor: RealtimeProcessor) {
        let wanted = zip(inputs, plan.inputPorts).map { ($0, $1) }
            + zip(outputs, plan.outputPorts).compactMap { port, destination in destination.map { (port, $0) } }
        processor.awaitCycles(within: seconds) {
            !wanted.contains(where: { port, other in portNamed(other) != nil && !port.connections.contains(other) })
        }
    }
}
