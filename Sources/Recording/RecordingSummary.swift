import EventSchema

/// What a recording did, for the final report (`jas record --json` prints it
/// with snake_case keys).
public struct RecordingSummary: Sendable, Equatable {
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
    /// Frames a second.
    public var sampleRate: Int
    /// Channels recorded.
    public var channels: Int
    /// The JACK ports recorded, channel order.
    public var ports: [String]
    /// Times the ring was full, and the frames that cost (written as silence).
    public var overruns: Int
    /// Frames written as silence for overruns.
    public var overrunFrames: Int64
    /// Xruns the server reported while recording.
    public var xruns: Int
    /// Every stretch of silence written for missing frames (overruns included).
    public var gaps: Int
    /// Frames written as silence in all gaps.
    public var gapFrames: Int64
    /// Interruptions by other sessions, and the frames of silence they cost
    /// (counted in `gaps` too).
    public var interruptions: Int
    /// Frames of silence interruptions cost.
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
    /// Frames a second.
    public var sampleRate: Int
    /// Highest sample peak per channel since the previous progress, dBFS.
    public var peakDBFS: [Double]
    /// How full the ring is, 0...1.
    public var ringFill: Double
    /// Times the ring was full so far.
    public var overruns: Int
    /// Xruns the server reported so far.
    public var xruns: Int
    /// Stretches of silence written for missing frames so far.
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

/// The summary as the last line of `jas record --json`.
extension RecordingSummary: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode("summary", forKey: "event")
        try json.encode(path, forKey: "path")
        try json.encode(paths, forKey: "paths")
        try json.encodeOrNull(logPath, forKey: "log_path")
        try json.encode(framesWritten, forKey: "frames_written")
        try json.encode(durationSeconds, forKey: "duration_seconds")
        try json.encode(sampleRate, forKey: "sample_rate")
        try json.encode(channels, forKey: "channels")
        try json.encode(ports, forKey: "ports")
        try json.encode(overruns, forKey: "overruns")
        try json.encode(overrunFrames, forKey: "overrun_frames")
        try json.encode(xruns, forKey: "xruns")
        try json.encode(gaps, forKey: "gaps")
        try json.encode(gapFrames, forKey: "gap_frames")
        try json.encode(interruptions, forKey: "interruptions")
        try json.encode(interruptionFrames, forKey: "interruption_frames")
        try json.encodeOrNull(firstFrameTime, forKey: "first_frame_time")
        try json.encode(prerollFrames, forKey: "preroll_frames")
        try json.encodeOrNull(timeReference, forKey: "time_reference")
        try json.encode(captureLatencyFrames, forKey: "capture_latency_frames")
        try json.encode(bufferSeconds, forKey: "buffer_seconds")
        try json.encodeOrNull(problem, forKey: "problem")
        try json.encode(unwrittenFrames, forKey: "unwritten_frames")
        try json.encodeOrNull(manifestPath, forKey: "manifest_path")
        try json.encodeOrNull(stopReason, forKey: "stop_reason")
    }
}

/// Progress as a line of `jas record --json` (every second) and of the watch
/// stream (four times a second): the peaks to 0.1 dB, `null` for a channel
/// in digital silence.
extension RecordingProgress: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode("progress", forKey: "event")
        try json.encode(isRecording, forKey: "recording")
        try json.encode(framesWritten, forKey: "frames_written")
        try json.encode(Double(framesWritten) / Double(max(1, sampleRate)), forKey: "seconds")
        try json.encode(peakDBFS.map { Figure.rounded($0, decimals: 1) }, forKey: "peak_dbfs")
        try json.encodeFigure(ringFill, decimals: 3, forKey: "ring_fill")
        try json.encode(overruns, forKey: "overruns")
        try json.encode(xruns, forKey: "xruns")
        try json.encode(gaps, forKey: "gaps")
        try json.encode(gapFrames, forKey: "gap_frames")
        try json.encodeOrNull(path, forKey: "path")
        try json.encode(serverLost, forKey: "server_lost")
        try json.encodeFigure(rateErrorPPM, forKey: "clock_rate_error_ppm")
    }
}
