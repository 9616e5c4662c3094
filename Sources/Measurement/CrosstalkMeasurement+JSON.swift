import EventSchema

/// A crosstalk result as one line of `jas analyze crosstalk --json`: each
/// channel's own gain and phase at 997 Hz, their match, and every leak.
extension CrosstalkMeasurement.Result: Encodable {
    /// How the figures are made, as the output says.
    public static let definition = "each output driven alone: at 997 Hz, -1 dBFS, each other input's level against the "
        + "driven channel's own input (dB; null: digital silence); against frequency, each other input's swept response "
        + "over the driven channel's own, at 1/3 octave"

    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try encodeRun("crosstalk", into: &json)
        try json.encode(Self.definition, forKey: "definition")
        try json.encode(channels, forKey: "channels")
        try json.encodeFigure(gainMatchDB, decimals: 3, forKey: "gain_match_db")
        try json.encodeFigure(phaseMatchDegrees, decimals: 2, forKey: "phase_match_deg")
        try json.encode(leaks.map { LeakLine(leak: $0, channels: channels) }, forKey: "leaks")
    }

    private struct LeakLine: Encodable {
        let leak: CrosstalkMeasurement.Leak
        let channels: [CrosstalkMeasurement.Channel]

        func encode(to encoder: any Encoder) throws {
            var json = encoder.container(keyedBy: EventKey.self)
            try json.encode(channels[leak.driven].outputPort, forKey: "driven_out_port")
            try json.encode(channels[leak.victim].inputPort, forKey: "in_port")
            try json.encodeFigure(leak.crosstalkDB, forKey: "crosstalk_db")
            try json.encode(leak.response.map { Point(frequency: $0.frequency, crosstalkDB: $0.crosstalkDB) }, forKey: "response")
        }
    }

    private struct Point: Encodable {
        let frequency: Double
        let crosstalkDB: Double

        func encode(to encoder: any Encoder) throws {
            var json = encoder.container(keyedBy: EventKey.self)
            try json.encodeFigure(frequency, decimals: 3, forKey: "frequency_hz")
            try json.encodeFigure(crosstalkDB, forKey: "crosstalk_db")
        }
    }
}

extension CrosstalkMeasurement.Channel: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(outputPort, forKey: "out_port")
        try json.encode(inputPort, forKey: "in_port")
        try json.encodeFigure(gainDB, decimals: 3, forKey: "gain_db")
        try json.encodeFigure(phaseDegrees, forKey: "phase_deg")
    }
}
