import EventSchema

/// THD+N against level as one line of `jas analyze thd --up-to … --json`:
/// the run, the definitions, and per channel each step and the maximum level.
extension LevelStaircase.Result: Encodable {
    /// How the maximum level is found.
    public static let maximumLevelDefinition = "maximum level: where THD+N first reaches the marking figure, interpolated "
        + "in dB between the two steps around it (AES17: 1 %, -40 dB); null when the staircase does not cross it"

    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try encodeRun("thd_vs_level", into: &json)
        try json.encodeFigure(frequency, decimals: 3, forKey: "frequency_hz")
        try json.encode(SteppedSine.Result.levelConvention, forKey: "level_convention")
        try json.encode(SteppedSine.Result.thdPlusNoiseDefinition, forKey: "thd_n_definition")
        try json.encodeFigure(maximumLevelTHDN, forKey: "max_level_thd_n_db")
        try json.encode(Self.maximumLevelDefinition, forKey: "max_level_definition")
        try json.encode(channels, forKey: "channels")
    }
}

extension LevelStaircase.Channel: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(outputPort, forKey: "out_port")
        try json.encode(inputPort, forKey: "in_port")
        try json.encodeFigure(maximumLevel.dBFS, forKey: "max_level_dbfs")
        try json.encode(maximumLevel.kind, forKey: "max_level")
        try json.encode(steps, forKey: "steps")
    }
}

extension LevelStaircase.MaximumLevel {
    /// How the maximum level was found, in the schema's words.
    public var kind: String {
        switch self {
        case .crossed: return "crossed"
        case .fullScale: return "full_scale"
        case .notReached: return "not_reached"
        case .reachedAtLowest: return "reached_at_lowest"
        }
    }
}

extension LevelStaircase.Step: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encodeFigure(levelDBFS, forKey: "level_dbfs")
        try json.encodeFigure(gainDB, forKey: "gain_db")
        try json.encodeDistortion(of: analysis)
    }
}
