import CSndFile

/// The file a recording is written to: container and sample format, checked
/// against the channel count before anything starts.
public struct RecordingFormat: Sendable, Equatable {
    /// The container.
    public enum Container: String, Sendable, CaseIterable {
        /// RIFF WAVE (Broadcast WAV with a `bext` chunk); at most 4 GiB.
        case wav
        /// EBU Tech 3306 RF64: WAV without the 4 GiB limit (`bext` too).
        case rf64
        /// Sony Wave64: WAV without the 4 GiB limit.
        case w64
        /// FLAC: lossless, integer samples only, at most 8 channels.
        case flac

        /// The file name extension.
        public var fileExtension: String { rawValue }

        /// How a person writes it: "WAV", "FLAC".
        public var name: String { rawValue.uppercased() }

        var libsndfileFormat: Int32 {
            switch self {
            case .wav: Int32(SF_FORMAT_WAV)
            case .rf64: Int32(SF_FORMAT_RF64)
            case .w64: Int32(SF_FORMAT_W64)
            case .flac: Int32(SF_FORMAT_FLAC)
            }
        }

        /// Whether the container carries a Broadcast WAV `bext` chunk.
        public var carriesBroadcastExtension: Bool { self == .wav || self == .rf64 }

        /// The most channels one file of this container holds.
        public var maximumChannels: Int { self == .flac ? 8 : 1024 }
    }

    /// How each sample is stored.
    public enum SampleFormat: String, Sendable, CaseIterable {
        /// 16-bit integer.
        case int16 = "16"
        /// 24-bit integer.
        case int24 = "24"
        /// 32-bit integer.
        case int32 = "32"
        /// 32-bit float (a full-scale sample is ±1.0).
        case float32 = "float"

        /// How a person says it: "24-bit", "32-bit float".
        public var name: String { self == .float32 ? "32-bit float" : "\(rawValue)-bit" }

        /// Bytes per sample in the file (FLAC compresses below this).
        public var bytes: Int {
            switch self {
            case .int16: 2
            case .int24: 3
            case .int32, .float32: 4
            }
        }

        var libsndfileSubtype: Int32 {
            switch self {
            case .int16: Int32(SF_FORMAT_PCM_16)
            case .int24: Int32(SF_FORMAT_PCM_24)
            case .int32: Int32(SF_FORMAT_PCM_32)
            case .float32: Int32(SF_FORMAT_FLOAT)
            }
        }
    }

    /// The file type.
    public var container: Container
    /// How each sample is stored.
    public var sampleFormat: SampleFormat

    /// A format; by default WAV of 32-bit float.
    public init(container: Container = .wav, sampleFormat: SampleFormat = .float32) {
        self.container = container
        self.sampleFormat = sampleFormat
    }

    /// libsndfile's format code.
    var libsndfileFormat: Int32 { container.libsndfileFormat | sampleFormat.libsndfileSubtype }

    /// Checks that one file of this format can hold `channels` channels at
    /// `sampleRate`; the error says what would work instead.
    public func validate(channels: Int, sampleRate: Int) throws(RecordingError) {
        if container == .flac && (sampleFormat == .int32 || sampleFormat == .float32) {
            throw .formatCannotHoldSamples(self)
        }
        if channels > container.maximumChannels { throw .tooManyChannels(container, channels: channels) }
        var info = SF_INFO(frames: 0, samplerate: Int32(sampleRate), channels: Int32(channels),
                           format: libsndfileFormat, sections: 0, seekable: 0)
        guard sf_format_check(&info) != 0 else {
            throw .unsupportedFormat("libsndfile cannot write \(container.rawValue) with \(sampleFormat.rawValue)-bit "
                                     + "samples, \(channels) channels at \(sampleRate) Hz")
        }
    }
}
