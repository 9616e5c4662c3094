import EventSchema

/// A notice as a line of `jas analyze ... --json` (interruptions only:
/// `{"event":"interrupted","by":"..."}`, `{"event":"resumed"}`).
extension AnalyzerNotice: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        switch self {
        case let .playing(run, of, seconds):
            try json.encode("playing", forKey: "event")
            try json.encode(run, forKey: "run")
            try json.encode(of, forKey: "of")
            try json.encodeFigure(seconds, decimals: 3, forKey: "seconds")
        case let .interrupted(by):
            try json.encode("interrupted", forKey: "event")
            try json.encode(by, forKey: "by")
        case .resumed:
            try json.encode("resumed", forKey: "event")
        }
    }
}
