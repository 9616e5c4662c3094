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

    /// The values a setting given in seconds may take (nil: it is not a span
    /// of seconds with fixed bounds): the recorder's checks and `jas
    /// record`'s options read the same bounds.
    public var secondsRange: ClosedRange<Double>? {
        switch self {
        case .rotation: 1...31_536_000
        case .buffer: 0.1...600
        case .preroll: 0...600
        case .silenceHold: 0.1...86_400
        case .channels, .duration, .trigger, .silenceThreshold, .onSilence, .onSignal: nil
        }
    }
}
