import EventSchema

/// A noise result as one line of `jas analyze noise --json`: the run, the
/// definitions its figures follow, and a figure set per channel. Levels a
/// bit-exact path leaves at digital silence are null (−∞ dBFS).
extension NoiseMeasurement.Result: Encodable {
    /// How the signal-to-noise ratio is given.
    public static let signalToNoiseDefinition = "AES17 signal-to-noise ratio against full scale: minus the unweighted idle-channel noise in dBFS"
    /// How the dynamic range is given.
    public static let dynamicRangeDefinition = "AES17 dynamic range: 997 Hz at -60 dBFS, the tone's bin removed (ideal notch), "
        + "the residual weighted; 60 dB plus the residual's distance below the tone"

    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try encodeRun("noise", into: &json)
        try json.encode(SteppedSine.Result.levelConvention, forKey: "level_convention")
        var definitions = json.nestedContainer(keyedBy: EventKey.self, forKey: "weightings")
        for weighting in Weighting.allCases {
            try definitions.encode(weighting.definition, forKey: EventKey(stringValue: weighting.rawValue))
        }
        try definitions.encode(NoiseMeasurement.quasiPeak468Definition, forKey: EventKey(stringValue: NoiseMeasurement.quasiPeak468Key))
        try json.encode(Self.signalToNoiseDefinition, forKey: "snr_definition")
        try json.encode(Self.dynamicRangeDefinition, forKey: "dynamic_range_definition")
        try json.encodeFigure(toneFrequency, decimals: 3, forKey: "tone_frequency_hz")
        try json.encodeFigure(NoiseMeasurement.toneLevelDBFS, forKey: "tone_level_dbfs")
        try json.encode(channels, forKey: "channels")
    }
}

extension NoiseMeasurement.Channel: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(outputPort, forKey: "out_port")
        try json.encode(inputPort, forKey: "in_port")
        var noise = json.nestedContainer(keyedBy: EventKey.self, forKey: "noise_dbfs")
        for level in idle.levels { try noise.encodeFigure(level.dBFS, forKey: EventKey(stringValue: level.weighting.rawValue)) }
        try noise.encodeFigure(quasiPeak468DBFS, forKey: EventKey(stringValue: NoiseMeasurement.quasiPeak468Key))
        try json.encode(idleSpectrum.bands, forKey: "noise_spectrum")
        try json.encodeFigure(signalToNoiseDB, forKey: "snr_db")
        try json.encodeFigure(toneDBFS, forKey: "tone_dbfs")
        try json.encode(residual, forKey: "residual_dbfs")
        var ranges = json.nestedContainer(keyedBy: EventKey.self, forKey: "dynamic_range_db")
        for weighting in NoiseMeasurement.dynamicRangeWeightings {
            try ranges.encodeFigure(dynamicRangeDB(weighting), forKey: EventKey(stringValue: weighting.rawValue))
        }
    }
}

/// The levels by weighting: `{"unweighted": -94.12, "a": -96.4, ...}`, dBFS.
extension NoiseAnalysis: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        for level in levels { try json.encodeFigure(level.dBFS, forKey: EventKey(stringValue: level.weighting.rawValue)) }
    }
}
