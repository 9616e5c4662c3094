/// What a recording did, for the final report (`jas record --json` prints it
/// with snake_case keys).
public struct RecordingSummary: Sendable, Codable, Equatable {
    /// The file (the first one when per channel or split at a rate change).
    public var path: String
    /// Every file written.
    public var paths: [String]
    /// The sidecar log (nil: none, for a take to a device such as `/dev/null`).
    public var logPath: String?
    /// Frames on the timeline, silence for gaps included.
    public var framesWritten: Int64
    /// Seconds on the timeline.
    public var durationSeconds: Double
    public var sampleRate: Int
    public var channels: Int
    /// The JACK ports recorded, channel order.
    public var ports: [String]
    /// Times the ring was full, and the frames that cost (written as silence).
    public var overruns: Int
    public var overrunFrames: Int64
    /// Xruns the server reported while recording.
    public var xruns: Int
    /// Every stretch of silence written for missing frames (overruns included).
    public var gaps: Int
    public var gapFrames: Int64
    /// Interruptions by other sessions, and the frames of silence they cost
    /// (counted in `gaps` too).
    public var interruptions: Int
    public var interruptionFrames: Int64
    /// JACK frame time of the file's first frame (nil: nothing recorded).
    public var firstFrameTime: UInt32?
    /// Frames of pre-roll at the start of the file.
    public var prerollFrames: Int
    /// The Broadcast WAV time reference written (samples since midnight), if any.
    public var timeReference: UInt64?
    /// Capture latency of the recorded ports, frames (taken off the time reference).
    public var captureLatencyFrames: Int
    /// The ring's size, seconds.
    public var bufferSeconds: Double
    /// Why it stopped early, if it did (a write error).
    public var problem: String?
    /// Why the take ended ("duration reached", "SIGTERM", "source lost: ...";
    /// nil while it runs).
    public var stopReason: String?
    /// Frames of the timeline in no file: the disk was full (each stretch a
    /// logged `gap`, counted in `gaps` and `gapFrames` too). `framesWritten`
    /// plus these is the take's timeline.
    public var unwrittenFrames: Int64 = 0
    /// The take's manifest (nil: none, a take to a device or a FIFO).
    public var manifestPath: String?
}

/// A live view of a recording, for a meter line or a progress object.
public struct RecordingProgress: Sendable, Equatable {
    /// Whether frames are going to the file (false: armed, waiting).
    public var isRecording: Bool
    /// Frames on the timeline so far.
    public var framesWritten: Int64
    public var sampleRate: Int
    /// Highest sample peak per channel since the previous progress, dBFS.
    public var peakDBFS: [Double]
    /// How full the ring is, 0...1.
    public var ringFill: Double
    public var overruns: Int
    public var xruns: Int
    public var gaps: Int
    /// Frames written as silence for a logged reason, so far.
    public var gapFrames: Int64
    /// The file written now (the last of a rotated take's files); nil before the first.
    public var path: String?
    /// Whether the server is gone (the recording waits for it).
    public var serverLost: Bool
    /// The sample clock's rate error against the wall clock, ppm (nil: not measured yet).
    public var rateErrorPPM: Double? = nil
}
