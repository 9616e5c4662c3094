/// A take under way: what `Recorder.prepare()` returns once every check
/// passed, the files and the log are open and capture has begun (armed, or
/// recording). What exists only from then on is read here: where it is
/// written and from which ports, the ring, its progress, its events and its
/// end. Stopping stays the recorder's, since a signal may stop a take that
/// is still being prepared.
public struct RunningTake: Sendable {
    private let recorder: Recorder
    /// The JACK ports recorded, in channel order.
    public let ports: [String]
    /// The first set's files, as named when the take was prepared (a set
    /// named by its first frame: its pattern, until that frame).
    public let paths: [String]
    /// The first file, or the pattern of a take named by its first frame.
    public let path: String
    /// The server's sample rate, Hz.
    public let sampleRate: Int
    /// Frames the ring between the callback and the disk holds.
    public let ringCapacityFrames: Int

    init(_ recorder: Recorder) {
        self.recorder = recorder
        let summary = recorder.summary
        ports = summary.ports
        paths = summary.paths
        path = summary.path
        sampleRate = summary.sampleRate
        ringCapacityFrames = recorder.ringCapacityFrames
    }

    /// Channels recorded (one per port).
    public var channels: Int { ports.count }
    /// Everything that happens to the take, as it happens (also in its log).
    public var events: AsyncStream<RecordingEvent> { recorder.eventStream }
    /// The take's state now; peaks are those since the previous call.
    public func progress() -> RecordingProgress { recorder.progress() }
    /// Turns of the disk thread's loop so far (a watchdog's sign of life).
    public var diskBeats: UInt64 { recorder.diskBeats }
    /// What the take did so far (final once the recorder stopped).
    public var summary: RecordingSummary { recorder.summary }

    /// Suspends until the take reached its duration, failed, was ended or
    /// was stopped.
    public func finished() async { await recorder.finished() }
}
