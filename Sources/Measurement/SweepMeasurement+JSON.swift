import EventSchema
import Foundation

/// A response result as one line of `jas analyze response --json`: the
/// sweep, and per channel the delay removed, the response at 1/24-octave
/// points (each the nearest bin's, not smoothed), and THD with harmonics 2
/// to 9 at 1/3-octave points (where a harmonic lies in the sweep's band),
/// each harmonic only when 20 dB above the method's floor there (`floor_db`;
/// none above it: `thd_db` null), and the noise floor from the silent pass
/// in 1/3-octave bands (`noise_floor`: `level_dbfs`, null for digital silence).
extension SweepMeasurement.Result: Encodable {
    /// Points an octave in the JSON line and the `--frd`/`--csv` files.
    public static let pointsPerOctave = 24
    /// How the figures are made, as the output says.
    public static let definition = "synchronized exponential sweep (Novak 2015); the recording's spectrum over the sweep's, "
        + "magnitude in dB against what was sent, phase in degrees with the path's whole-frame delay (the impulse "
        + "response's peak) removed; each point the nearest FFT bin's, not smoothed"

    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try encodeRun("response", into: &json)
        try json.encode(Self.definition, forKey: "definition")
        try json.encodeFigure(sweep.startFrequency, decimals: 3, forKey: "start_hz")
        try json.encodeFigure(sweep.endFrequency, decimals: 3, forKey: "end_hz")
        try json.encodeFigure(Double(sweep.sweepFrames) / Double(sampleRate), decimals: 3, forKey: "sweep_seconds")
        try json.encodeFigure(sweep.levelDBFS, forKey: "level_dbfs")
        try json.encode(channels.map { ChannelLine(channel: $0, sweep: sweep) }, forKey: "channels")
    }

    private struct ChannelLine: Encodable {
        let channel: SweepMeasurement.Channel
        let sweep: SweepStimulus

        func encode(to encoder: any Encoder) throws {
            var json = encoder.container(keyedBy: EventKey.self)
            try json.encode(channel.outputPort, forKey: "out_port")
            try json.encode(channel.inputPort, forKey: "in_port")
            try json.encode(channel.analysis.delayFrames, forKey: "delay_frames")
            let frequencies = SweepAnalysis.logFrequencies(from: sweep.startFrequency, to: sweep.endFrequency,
                                                           perOctave: SweepMeasurement.Result.pointsPerOctave)
            try json.encode(channel.analysis.points(at: frequencies), forKey: "response")
            let thirds = SweepAnalysis.logFrequencies(from: sweep.startFrequency, to: sweep.endFrequency, perOctave: 3)
            try json.encode(thirds.compactMap { channel.analysis.distortion(at: $0) },
                            forKey: "distortion")
            try json.encode(channel.noiseFloor.bands, forKey: "noise_floor")
        }
    }
}

/// THD and the harmonics at one fundamental frequency, from the sweep.
extension SweepAnalysis.Distortion: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encodeFigure(frequency, decimals: 3, forKey: "frequency_hz")
        try json.encodeFigure(thdDB, forKey: "thd_db")
        try json.encodeFigure(thdDB.map { pow(10, $0 / 20) * 100 }, decimals: 5, forKey: "thd_percent")
        try json.encodeFigure(floorDB, forKey: "floor_db")
        try json.encode(harmonics.keys.sorted().map { Harmonic(order: $0, levelDB: harmonics[$0]!) }, forKey: "harmonics")
    }

    private struct Harmonic: Encodable {
        let order: Int
        let levelDB: Double

        func encode(to encoder: any Encoder) throws {
            var json = encoder.container(keyedBy: EventKey.self)
            try json.encode(order, forKey: "order")
            try json.encodeFigure(levelDB, forKey: "level_db")
        }
    }
}

extension SweepAnalysis.Point: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encodeFigure(frequency, decimals: 3, forKey: "frequency_hz")
        try json.encodeFigure(magnitudeDB, decimals: 3, forKey: "magnitude_db")
        try json.encodeFigure(phaseDegrees, decimals: 2, forKey: "phase_deg")
    }
}

extension NoiseSpectrum.Band: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encodeFigure(frequency, decimals: 3, forKey: "frequency_hz")
        try json.encodeFigure(low, decimals: 3, forKey: "low_hz")
        try json.encodeFigure(high, decimals: 3, forKey: "high_hz")
        try json.encodeFigure(dBFS, forKey: "level_dbfs")
    }
}
