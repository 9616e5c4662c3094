/// One channel's figures for one interval (or, in a summary, the programme).
public struct ChannelReading: Sendable, Equatable {
    /// 1-based channel number.
    public var channel: Int
    /// The JACK port or file channel metered.
    public var source: String
    /// Highest sample magnitude, dBFS.
    public var samplePeakDBFS: Double
    /// Highest true peak (4× oversampled, BS.1770-4 Annex 2), dBTP.
    public var truePeakDBTP: Double
    /// RMS over the interval (AES17: a full-scale sine is 0 dBFS), dBFS.
    public var rmsDBFS: Double
    /// IEC 60268-10 type I (DIN) PPM reading at the end of the interval, dBFS.
    public var ppmTypeIDBFS: Double
    /// IEC 60268-10 type IIb (EBU) PPM reading, dBFS.
    public var ppmTypeIIbDBFS: Double
    /// IEC 60268-17 VU reading, VU.
    public var vu: Double
    /// K-meter reading on the chosen K scale.
    public var kMeter: Double
}

/// What the meter says for one interval.
public struct MeterReading: Sendable, Equatable {
    /// Seconds of audio metered so far (the end of this interval).
    public var seconds: Double
    /// Momentary (400 ms), short-term (3 s) and integrated loudness, LUFS (nil: below the −70 LUFS gate).
    public var momentaryLUFS: Double?
    /// Short-term loudness (3 s), LUFS (nil: below the −70 LUFS gate).
    public var shortTermLUFS: Double?
    /// Integrated loudness of the programme so far, LUFS (nil: below the gate).
    public var integratedLUFS: Double?
    /// Loudness range so far, LU.
    public var loudnessRangeLU: Double?
    /// Each channel's levels.
    public var channels: [ChannelReading]
}

/// The figures for the whole programme.
public struct MeterSummary: Sendable, Equatable {
    /// Seconds metered.
    public var seconds: Double
    /// Seconds the programme's figures cover: since the start or the last
    /// reset, less the pauses (`seconds` when neither happened).
    public var programmeSeconds: Double
    /// Frames a second of the metered audio.
    public var sampleRate: Int
    /// The channel layout's name (for example "stereo" or "5.1").
    public var layout: String
    /// Integrated loudness (both gates), LUFS.
    public var integratedLUFS: Double?
    /// Loudness range (EBU Tech 3342), LU.
    public var lraLU: Double?
    /// Highest true peak over all channels, dBTP.
    public var truePeakDBTP: Double
    /// Highest sample peak over all channels, dBFS.
    public var samplePeakDBFS: Double
    /// Highest momentary and short-term loudness seen, LUFS.
    public var maxMomentaryLUFS: Double?
    /// Highest short-term loudness seen, LUFS.
    public var maxShortTermLUFS: Double?
    /// Per channel: peaks and RMS over the programme, highest PPM and VU readings.
    public var channels: [ChannelReading]
    /// Xruns the server reported while metering live (0 for a file): each
    /// may have cost or repeated a period, so a peak across it can read high.
    public var xruns = 0
}
