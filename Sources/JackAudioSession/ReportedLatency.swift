import JackKit

/// What JACK's latency ranges say about a session's path at one moment,
/// frames. A side that is not known is nil: never 0 in its place.
public struct ReportedLatency: Sendable, Equatable {
    /// Capture latency of the session's inputs (nil: no input connected,
    /// the category has none, or the session is inactive).
    public var capture: LatencyRange?
    /// Playback latency of the session's outputs (nil likewise).
    public var playback: LatencyRange?
    /// Whether JACK holds these ranges for the session's own ports, where
    /// other clients read them. False while JACK has not yet run the
    /// session's latency callback since its connections changed, and for
    /// good where the session's outputs come back to its inputs through
    /// jackd's `-L` loopback (a cycle in the graph: jackd runs no latency
    /// callback for a client in one). The numbers above are right either
    /// way; what other clients see of the session's ports is not.
    public var settled: Bool

    /// Latencies as JACK reports them.
    public init(capture: LatencyRange?, playback: LatencyRange?, settled: Bool) {
        self.capture = capture
        self.playback = playback
        self.settled = settled
    }

    /// Capture plus playback, the worst case; nil unless both are known.
    public var roundTripFrames: Int? {
        guard let capture, let playback else { return nil }
        return capture.max + playback.max
    }
}
