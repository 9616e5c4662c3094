import JackAudioSession
import Capture
import Foundation

/// What can stop a recording, each with what to do about it. Everything that
/// can be known before the first frame (path, space, ports, format) is
/// checked before anything starts.
public enum RecordingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The output path cannot be written (the path and the system's reason).
    case unwritablePath(path: String, reason: String)
    /// The file system lacks room for the recording asked for.
    case insufficientSpace(path: String, neededBytes: Int64, freeBytes: Int64)
    /// The ports to record cannot be tapped (none match, too few, no server).
    case capture(CaptureError)
    /// A setting of the configuration cannot be used (the reason says what would).
    case invalidSetting(RecordingSetting, reason: String)
    /// FLAC holds integer samples of 16 or 24 bits only.
    case formatCannotHoldSamples(RecordingFormat)
    /// One file of the container holds fewer channels than were asked for.
    case tooManyChannels(RecordingFormat.Container, channels: Int)
    /// libsndfile cannot write this container, sample format, channels and rate together.
    case unsupportedFormat(String)
    /// The output is a FIFO, which cannot be rotated, and takes FLAC only
    /// (the other containers rewrite their header at the end).
    case pipeOutput(path: String, rotates: Bool)
    /// The output exists and the configuration does not say to overwrite it.
    case outputExists(path: String, isSymbolicLink: Bool)
    /// Another recording holds the output (its `flock`).
    case outputBusy(path: String)
    /// The take's log would be one of its sound files (same name).
    case logNameClash(path: String)
    /// A rotated take found no free name for its next file after trying many.
    case noFreeName(refusals: [String])
    /// The JACK session could not start: the session's error, with its code
    /// and the JACK error underneath (its message names the server).
    case session(AudioSessionError)
    /// libsndfile refused a file operation.
    case file(path: String, reason: String)
    /// The file system is full (or the user's quota reached).
    case diskFull(path: String)
    /// `stop()` came before `prepare()`: nothing was set up.
    case stoppedBeforeStart

    public var description: String {
        switch self {
        case let .unwritablePath(path, reason):
            "cannot write '\(path)': \(reason); choose a writable file path (its folder must exist)"
        case let .insufficientSpace(path, needed, free):
            "not enough space for '\(path)': the recording needs \(Self.size(needed)), the file system has "
                + "\(Self.size(free)) free; free space, record to another disk, or record for less time"
        case let .capture(error):
            error.description
        case let .invalidSetting(setting, reason):
            "\(setting.name) \(reason)"
        case let .formatCannotHoldSamples(format):
            "\(format.container.name) stores 16- or 24-bit integer samples only, not \(format.sampleFormat.name); "
                + "32-bit and float samples need WAV, RF64 or W64"
        case let .tooManyChannels(container, channels):
            "\(container.name) holds at most \(container.maximumChannels) channels per file, not \(channels); write one "
                + "file per channel" + (container == .flac ? ", or use RF64 or W64" : ", or record fewer ports")
        case let .unsupportedFormat(reason):
            reason
        case let .pipeOutput(path, rotates):
            rotates ? "'\(path)' is a FIFO: a pipe cannot be rotated"
                : "'\(path)' is a FIFO: only FLAC can be written to a pipe (WAV, RF64 and W64 rewrite their header at the end)"
        case let .outputExists(path, isSymbolicLink):
            "cannot record to '\(path)': it exists" + (isSymbolicLink ? " (a symbolic link)" : "")
                + ", and a recording never replaces a file unless told to"
        case let .outputBusy(path):
            "cannot record to '\(path)': another recording is writing it now"
        case let .logNameClash(path):
            "cannot record to '\(path)': the take's log file would have the same name (a take's log is its name with "
                + ".log in place of its extension); give the take another extension, e.g. .wav"
        case let .noFreeName(refusals):
            "no free name for the next file: " + refusals.suffix(3).joined(separator: "; ")
        case let .session(error):
            error.message
        case let .file(path, reason):
            "'\(path)': \(reason)"
        case let .diskFull(path):
            "'\(path)': the disk is full (no space left on it)"
        case .stoppedBeforeStart:
            "the recording was stopped before it was set up; nothing was written"
        }
    }

    static func size(_ bytes: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) bytes" : String(format: "%.1f %@", value, units[unit])
    }
}
