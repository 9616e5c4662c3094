/// A sound file libsndfile would not open: the file's path and why, in words
/// that say what to do about it.
public struct SoundFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file as it was named.
    public let path: String
    /// Why it cannot be read.
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "'\(path)': \(reason)" }
}
