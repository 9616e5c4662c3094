/// A field of `Recorder.Configuration` that a check refused, named as a
/// person says it; the tool that set it knows which of its options that was.
public enum RecordingSetting: String, Sendable, CaseIterable {
    /// The settings a check can refuse, one per field of `Recorder.Configuration`.
    case channels, duration, rotation, buffer, preroll, trigger, silenceThreshold, silenceHold, onSilence, onSignal

    /// The setting in words, e.g. "the rotation interval".
    public var name: String {
        switch self {
        case .channels: "the channel count"
        case .duration: "the duration"
        case .rotation: "the rotation interval"
        case .buffer: "the ring buffer"
        case .preroll: "the pre-roll"
        case .trigger: "the trigger level"
        case .silenceThreshold: "the silence threshold"
        case .silenceHold: "the silence hold"
        case .onSilence: "the command run on silence"
        case .onSignal: "the command run when the signal returns"
        }
    }
}
