import CJack

/// A JACK latency range in frames: the smallest and largest delay on a path.
public struct LatencyRange: Sendable, Equatable, CustomStringConvertible {
    /// Smallest latency, frames.
    public var min: Int
    /// Largest latency, frames.
    public var max: Int

    /// A range from `min` to `max` frames.
    public init(min: Int, max: Int) {
        self.min = min
        self.max = max
    }

    /// The zero range.
    public static let zero = LatencyRange(min: 0, max: 0)

    /// The smallest range that covers both.
    public func union(_ other: LatencyRange) -> LatencyRange {
        LatencyRange(min: Swift.min(min, other.min), max: Swift.max(max, other.max))
    }

    /// Both ends moved by `frames`.
    public func adding(_ frames: Int) -> LatencyRange {
        LatencyRange(min: min + frames, max: max + frames)
    }

    public var description: String { "[\(min), \(max)]" }

    init(_ raw: jack_latency_range_t) {
        self.init(min: Int(raw.min), max: Int(raw.max))
    }

    var raw: jack_latency_range_t {
        jack_latency_range_t(min: jack_nframes_t(clamping: min), max: jack_nframes_t(clamping: max))
    }
}

/// Which way a latency is counted: capture (since the data entered the graph)
/// or playback (until it leaves).
public enum LatencyMode: Sendable, Equatable {
    /// Time since the data arrived at a capture port.
    case capture
    /// Time until the data reaches a playback port.
    case playback

    var raw: jack_latency_callback_mode_t {
        self == .capture ? JackCaptureLatency : JackPlaybackLatency
    }

    init(_ raw: jack_latency_callback_mode_t) {
        self = raw == JackCaptureLatency ? .capture : .playback
    }
}
