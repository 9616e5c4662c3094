/// An audio-session mode: a specialisation of the category (AVAudioSession.Mode).
public enum Mode: String, Sendable, CaseIterable, Codable {
    /// No specialisation.
    case `default`
    /// Two-way voice communication.
    case voiceChat
    /// Game voice chat.
    case gameChat
    /// Recording video with sound.
    case videoRecording
    /// The direct path: no processing at all, the app's buffers are the JACK
    /// port buffers, connected straight to the hardware ports.
    case measurement
    /// Film sound.
    case moviePlayback
    /// Two-way video communication.
    case videoChat
    /// Speech, such as podcasts and audio books.
    case spokenAudio

    /// The categories this mode may be combined with (Table B-2 of the
    /// Programming Guide: spokenAudio with playback only).
    public var compatibleCategories: Set<Category> {
        switch self {
        case .default: Set(Category.allCases)
        case .voiceChat, .gameChat, .videoChat: [.playAndRecord]
        case .videoRecording: [.playAndRecord, .record]
        case .moviePlayback: [.playback]
        case .measurement: [.playAndRecord, .record, .playback]
        case .spokenAudio: [.playback]
        }
    }
}
