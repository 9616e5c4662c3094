import JackAudioSession
import Capture
import SoundFile

/// What can stop a meter before its first reading, each naming the port,
/// file or server and saying what would work.
public enum MeteringError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The ports to meter cannot be tapped (none match, no server).
    case capture(CaptureError)
    /// The tap's session could not start: the session's error, with its code
    /// and the JACK error underneath.
    case session(AudioSessionError)
    /// The sound file to meter cannot be read.
    case file(SoundFileError)
    /// The loudness log cannot be written.
    case unwritableLog(path: String, reason: String)
    /// The channel layout asked for does not fit the channels there are
    /// (`source`: the file, or the ports matched).
    case layoutMismatch(layout: ChannelLayout, channels: Int, source: String)
    /// libebur128 cannot meter this many channels at this rate.
    case unsupportedStream(channels: Int, sampleRate: Int)

    public var description: String {
        switch self {
        case let .capture(error):
            error.description
        case let .session(error):
            error.message
        case let .file(error):
            error.description
        case let .unwritableLog(path, reason):
            "cannot write the loudness log '\(path)': \(reason)"
        case let .layoutMismatch(layout, channels, source):
            "the \(layout.rawValue) layout needs \(layout.channelCount) channels, not the \(channels) of \(source)"
        case let .unsupportedStream(channels, sampleRate):
            "libebur128 cannot meter \(channels) channels at \(sampleRate) Hz (it takes 1 to "
                + "\(ProgrammeLoudness.mostChannels) channels, 16 Hz to 2.8 MHz); meter fewer channels at a time"
        }
    }
}
