/// An audio-session category: the app's audio role (AVAudioSession.Category).
public enum Category: String, Sendable, CaseIterable, Codable {
    /// Sound that mixes with others and is not essential (output only).
    case ambient
    /// The default: non-mixable, output only.
    case soloAmbient
    /// Playback that is central to the app (output only).
    case playback
    /// Recording (input only).
    case record
    /// Recording and playback at once (input and output).
    case playAndRecord
    /// Offline audio processing: no audio ports at all.
    case audioProcessing
    /// Distinct streams to distinct output devices at once (input and output).
    case multiRoute

    /// Whether sessions in this category receive audio input.
    public var hasInput: Bool {
        switch self {
        case .record, .playAndRecord, .multiRoute: true
        case .ambient, .soloAmbient, .playback, .audioProcessing: false
        }
    }

    /// Whether sessions in this category send audio output.
    public var hasOutput: Bool {
        switch self {
        case .ambient, .soloAmbient, .playback, .playAndRecord, .multiRoute: true
        case .record, .audioProcessing: false
        }
    }
}
