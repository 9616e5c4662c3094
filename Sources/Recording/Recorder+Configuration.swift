import Foundation

extension Recorder {
    /// What to record, where, and how.
    public struct Configuration: Sendable {
        /// The JACK server (nil: `$JACK_DEFAULT_SERVER` or "default").
        public var serverName: String?
        /// Shell wildcards of ports to record (empty: the first physical capture ports).
        public var portPatterns: [String] = []
        /// How many channels (default: every matched port, or 2 physical ports).
        public var channels: Int?
        /// The file to write (with per-channel files, its stem gets `_1`,
        /// `_2`, ...); strftime fields (`take-%Y%m%d-%H%M%S.wav`) are filled
        /// in with each file's start (see `TakeNaming`).
        public var outputPath: String
        /// The file type and sample format.
        public var format = RecordingFormat()
        /// One file per channel instead of one interleaved file.
        public var perChannelFiles = false
        /// Seconds to record, then stop (nil: until stopped).
        public var duration: Double?
        /// Start a new file every this many seconds (nil: one file): on the
        /// wall clock's boundaries, or every period of the take (`rotationAlignment`).
        public var rotateSeconds: Double?
        /// Where rotation counts from: the clock (default; a period that
        /// divides a day) or the take's start.
        public var rotationAlignment = RotationAlignment.clock
        /// The wall clock names, `bext` times and clock-aligned cuts follow
        /// (measured against the frames as they come; see `FrameClock`).
        public var clock: any WallClock = SystemWallClock()
        /// The one time zone of names, `bext` and the clock's boundaries.
        public var timeZone = RecordingTimeZone.local
        /// The take's manifest (JSON Lines, see `TakeManifest`); nil: the
        /// default for the output pattern (`TakeManifest.defaultPath`). A
        /// take to a device or a FIFO has none.
        public var manifestPath: String?
        /// Signs each line of the manifest (Ed25519): `jas verify --key` then
        /// proves no line was written without the private key.
        public var manifestSigningKey: ManifestSigningKey?
        /// Which of its own files the logger deletes, and when.
        public var retention = Retention()
        /// End the take when the disk is full (else: close the file, wait for
        /// room, go on in a new file, and log the frames that could not be written).
        public var stopsOnDiskFull = false
        /// Size of the ring between the real-time thread and the disk thread, seconds.
        public var bufferSeconds = 4.0
        /// Seconds of audio from before the start (command or trigger) that the file begins with.
        public var prerollSeconds = 0.0
        /// Start when any channel's sample peak reaches this level, dBFS.
        public var triggerDBFS: Double?
        /// Wait for `start()` instead of starting at once (used with pre-roll).
        public var waitsForStartCommand = false
        /// The JACK client name.
        public var clientName = "jas-record"
        /// Replace files that exist at the output's paths (never, by default).
        public var overwrite = false
        /// Dead air: a channel below this sample-peak level, dBFS, for
        /// `silenceHoldSeconds` is a `silence` event; its return a `signal` event.
        public var silenceThresholdDBFS = -60.0
        /// How long the level must stay below the threshold before a `silence` event, seconds.
        public var silenceHoldSeconds = 10.0
        /// Shell commands run at those events (environment: `JAS_EVENT`,
        /// `JAS_CHANNELS`, `JAS_PORTS`, `JAS_LEVEL_DBFS`, `JAS_POSITION_FRAMES`,
        /// `JAS_POSITION_SECONDS`, `JAS_SILENT_SECONDS`, `JAS_TIME`, `JAS_FILE`).
        public var onSilence: String?
        /// A shell command run when the signal returns after a `silence` event.
        public var onSignal: String?
        /// Seconds the end of the take waits for those commands still
        /// running before it ends them (SIGTERM, then SIGKILL); each so ended is logged.
        public var hookGraceSeconds = 5.0
        /// End the take when a recorded port goes away, instead of recording
        /// silence until it returns (what the seeds suggest for recording apps).
        public var stopsOnSourceLost = false
        /// Hears the take as it is written, on the disk thread: interleaved
        /// frames, or nil for frames written as silence (a logged gap). For
        /// a meter beside the take; it must not block.
        public var onWritten: (@Sendable (UnsafeBufferPointer<Float>?, Int) -> Void)?

        /// A take written to `outputPath`, with every other setting at its default.
        public init(outputPath: String) { self.outputPath = outputPath }
    }
}
