import EventSchema

/// A verdict as one line of `jas analyze ... --limits FILE --json`.
extension AnalyzerVerdict: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode("verdict", forKey: "event")
        try json.encode(source, forKey: "limits")
        try json.encode(passed, forKey: "passed")
        try json.encode(rows, forKey: "rows")
    }
}

extension AnalyzerVerdict.Row: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(measurement, forKey: "measurement")
        try json.encode(outputPort, forKey: "out_port")
        try json.encode(inputPort, forKey: "in_port")
        try json.encode(figure, forKey: "figure")
        try json.encodeFigure(value, forKey: "value")
        try json.encodeOrNull(bound.min, forKey: "min")
        try json.encodeOrNull(bound.max, forKey: "max")
        try json.encode(passed, forKey: "passed")
    }
}
