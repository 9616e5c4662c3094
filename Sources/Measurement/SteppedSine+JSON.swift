import EventSchema

/// A stepped-sine result as one line of `jas analyze thd --json`: the run,
/// the definitions its figures follow, and a figure set per channel.
extension SteppedSine.Result: Encodable {
    /// How levels are counted, as every output says.
    public static let levelConvention = "dBFS per AES17: a full-scale sine is 0 dBFS"
    /// How THD+N is measured.
    public static let thdPlusNoiseDefinition = "AES17 THD+N: all but the fundamental in 20 Hz-20 kHz (the fundamental's "
        + "bin removed from a coherent FFT, the band limited exactly), root-sum-square, relative to the fundamental"
    /// How THD is measured.
    public static let thdDefinition = "THD: harmonics 2 to N below half the sample rate, root-sum-square, relative to the fundamental"

    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try encodeRun("thd", into: &json)
        try json.encodeFigure(frequency, decimals: 3, forKey: "frequency_hz")
        try json.encodeFigure(levelDBFS, forKey: "level_dbfs")
        try json.encode(Self.levelConvention, forKey: "level_convention")
        try json.encode(Self.thdDefinition, forKey: "thd_definition")
        try json.encode(Self.thdPlusNoiseDefinition, forKey: "thd_n_definition")
        try json.encode(channels, forKey: "channels")
    }
}

extension SteppedSine.Channel: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(outputPort, forKey: "out_port")
        try json.encode(inputPort, forKey: "in_port")
        try json.encodeFigure(analysis.fundamentalDBFS, forKey: "fundamental_dbfs")
        try json.encodeFigure(gainDB, forKey: "gain_db")
        try json.encodeFigure(analysis.phaseDegrees, forKey: "phase_deg")
        try json.encodeDistortion(of: analysis)
        try json.encodeFigure(analysis.residualDBFS, forKey: "residual_dbfs")
        try json.encode(analysis.harmonics, forKey: "harmonics")
        try json.encode(residualSpectrum.bands, forKey: "residual_spectrum")
    }
}

extension HarmonicAnalysis.Harmonic: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(order, forKey: "order")
        try json.encodeFigure(frequency, decimals: 3, forKey: "frequency_hz")
        try json.encodeFigure(levelDB, forKey: "level_db")
        try json.encodeFigure(levelDBFS, forKey: "level_dbfs")
    }
}

extension KeyedEncodingContainer<EventKey> {
    /// THD and THD+N, each in dB and in percent of the fundamental.
    mutating func encodeDistortion(of analysis: HarmonicAnalysis) throws {
        try encodeFigure(analysis.thdDB, forKey: "thd_db")
        try encodeFigure(analysis.thdPercent, decimals: 7, forKey: "thd_percent")
        try encodeFigure(analysis.thdPlusNoiseDB, forKey: "thd_n_db")
        try encodeFigure(analysis.thdPlusNoisePercent, decimals: 7, forKey: "thd_n_percent")
    }
}
