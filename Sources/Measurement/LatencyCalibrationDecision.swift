/// Whether a set of latency readings may become a stored calibration, and
/// which: the median excess of the readings that carry one, as long as they
/// agree with each other. Readings without a reported latency (not known, or
/// changed during their window) carry no excess and count for nothing.
public enum LatencyCalibrationDecision: Equatable, Sendable, CustomStringConvertible {
    /// Store `excessFrames` against what JACK reported for each side (frames) when it was measured.
    case store(excessFrames: Double, reportedCapture: Int, reportedPlayback: Int)
    /// No reading carries an excess.
    case nothingToStore(readings: Int)
    /// The readings' excesses lie further apart than `tolerance` frames.
    case readingsDisagree(smallest: Double, largest: Double, tolerance: Double)
    /// The readings were measured against different reported latencies (frames, round trip).
    case reportedLatencyMoved(values: [Int])

    /// How far apart, in frames, the excesses of one calibration may lie:
    /// the multi-tone method reads a fixed path to a small fraction of a frame.
    public static let tolerance = 1.0

    /// The decision for `readings`.
    public init(readings: [LatencyReading]) {
        let usable = readings.filter { $0.valid && $0.excessFrames != nil && $0.reportedFrames != nil }
        guard let first = usable.first else {
            self = .nothingToStore(readings: readings.count)
            return
        }
        let reported = Set(usable.compactMap(\.reportedFrames))
        if reported.count > 1 {
            self = .reportedLatencyMoved(values: reported.sorted())
            return
        }
        let sorted = usable.sorted { $0.excessFrames! < $1.excessFrames! }
        let smallest = sorted.first!.excessFrames!, largest = sorted.last!.excessFrames!
        if largest - smallest > Self.tolerance {
            self = .readingsDisagree(smallest: smallest, largest: largest, tolerance: Self.tolerance)
            return
        }
        let middle = sorted[sorted.count / 2]
        self = .store(excessFrames: middle.excessFrames!, reportedCapture: middle.reportedCaptureFrames ?? first.reportedCaptureFrames!,
                      reportedPlayback: middle.reportedPlaybackFrames ?? first.reportedPlaybackFrames!)
    }

    public var description: String {
        switch self {
        case let .store(excess, capture, playback):
            return "store \(excess) frames (against capture \(capture), playback \(playback))"
        case let .nothingToStore(count):
            return "none of the \(count) valid reading(s) had a latency reported by JACK to compare with; "
                + "measure again once the path's connections and period stay put"
        case let .readingsDisagree(smallest, largest, tolerance):
            return "the readings disagree: the excess ranges from \(Self.frames(smallest)) to \(Self.frames(largest)) frames, "
                + "more than \(Self.frames(tolerance)) apart (the path changed while measuring, or it drifts); "
                + "measure again on a quiet path"
        case let .reportedLatencyMoved(values):
            return "JACK reported different latencies for the path while measuring ("
                + values.map(String.init).joined(separator: ", ") + " frames); measure again once it stays put"
        }
    }

    private static func frames(_ value: Double) -> String {
        String(format: "%+.3f", value)
    }
}
