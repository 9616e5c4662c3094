import AudioSession
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
    /// The format cannot hold what was asked (the reason says what would).
    case unsupportedFormat(String)
    /// An argument out of range.
    case badParameter(String)
    /// The JACK session could not start: the session's error, with its code
    /// and the JACK error underneath (its message names the server).
    case session(AudioSessionError)
    /// libsndfile refused a file operation.
    case file(path: String, reason: String)

    public var description: String {
        switch self {
        case let .unwritablePath(path, reason):
            "cannot write '\(path)': \(reason); choose a writable file path (its folder must exist)"
        case let .insufficientSpace(path, needed, free):
            "not enough space for '\(path)': the recording needs \(Self.size(needed)), the file system has "
                + "\(Self.size(free)) free; free space, record to another disk, or shorten --for"
        case let .capture(error):
            error.description
        case let .unsupportedFormat(reason):
            reason
        case let .badParameter(reason):
            reason
        case let .session(error):
            error.message
        case let .file(path, reason):
            "'\(path)': \(reason)"
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
