import Foundation

/// Noise, signal-to-noise ratio and dynamic range of a path, per AES17, in
/// one session in measurement mode (`StimulusRun`): two runs on every
/// `--out`/`--in` pair.
/// * The idle channel: digital silence out, the noise that comes back under
///   each `Weighting`. The signal-to-noise ratio is against full scale:
///   minus the unweighted idle noise in dBFS.
/// * Dynamic range: 997 Hz at −60 dBFS, the tone's bin removed (the ideal
///   notch of a coherent block), the residual weighted A and CCIR-RMS:
///   60 dB plus the residual's distance below the tone.
/// An input with no tone in the second run is no signal: nothing feeds it
/// (the idle run alone could not tell that from a perfect path).
public struct NoiseMeasurement: Sendable, AnalyzerMeasurement {
    /// The JACK server the session opens on.
    public var serverName: String
    /// Output port each channel is driven on.
    public var outputPorts: [String]
    /// Input port each channel is read from (as many as outputs).
    public var inputPorts: [String]
    /// Runs to try when xruns spoil them.
    public var maximumAttempts = 3
    /// The session's JACK client name.
    public var clientName = "jas-analyze"
    /// Called when a run was spoilt and is measured again, with what spoilt it.
    public var onSpoiltRun: (@Sendable (String) -> Void)?
    /// Told when a run starts, and of interruptions and the measuring again after them.
    public var onNotice: (@Sendable (AnalyzerNotice) -> Void)?

    /// AES17's dynamic-range tone: frequency (Hz) and level (dBFS).
    public static let toneFrequency = 997.0
    /// AES17's dynamic-range tone level, dBFS.
    public static let toneLevelDBFS = -60.0
    /// The weightings a dynamic range is given with (AES17 names both).
    public static let dynamicRangeWeightings: [Weighting] = [.a, .ccirRMS]
    /// The quasi-peak 468 figure's name beside the weightings' (`noise_dbfs`).
    public static let quasiPeak468Key = "itu468_qp"
    /// How the quasi-peak 468 figure is made, as the output says.
    public static let quasiPeak468Definition = "ITU-R BS.468-4: the 468 curve (0 dB at 1 kHz), 20 Hz-20 kHz, its quasi-peak "
        + "detector (every window of Tables 2 and 3 met); a steady full-scale 1 kHz sine reads 0 dBFS"

    /// A measurement on `serverName`, `outputPorts[i]` read back on `inputPorts[i]`.
    public init(serverName: String, outputPorts: [String], inputPorts: [String]) {
        self.serverName = serverName
        self.outputPorts = outputPorts
        self.inputPorts = inputPorts
    }

    /// What one channel measured.
    public struct Channel: Sendable, Equatable {
        /// The channel's output port.
        public let outputPort: String
        /// The channel's input port.
        public let inputPort: String
        /// The idle channel's noise.
        public let idle: NoiseAnalysis
        /// The idle channel's noise in 1/3-octave bands, dBFS.
        public let idleSpectrum: NoiseSpectrum
        /// The idle channel's noise through ITU-R BS.468's curve and quasi-peak detector, dBFS (`QuasiPeakMeter`).
        public let quasiPeak468DBFS: Double
        /// What came back of the −60 dBFS tone: its level, dBFS.
        public let toneDBFS: Double
        /// The −60 dBFS tone's residual (the tone's bin removed).
        public let residual: NoiseAnalysis

        /// Signal-to-noise ratio against full scale, dB (unweighted idle noise).
        public var signalToNoiseDB: Double { -idle.level(.unweighted) }

        /// AES17 dynamic range under `weighting`, dB.
        public func dynamicRangeDB(_ weighting: Weighting) -> Double {
            (toneDBFS - residual.level(weighting)) - NoiseMeasurement.toneLevelDBFS
        }
    }

    /// What the measurement found.
    public struct Result: Sendable, Equatable, AnalyzerResult {
        /// The server measured on.
        public let serverName: String
        /// The server's sample rate, Hz.
        public let sampleRate: Int
        /// The server's period, frames.
        public let periodFrames: Int
        /// The dynamic-range tone as played, Hz.
        public let toneFrequency: Double
        /// One entry per --out/--in pair.
        public let channels: [Channel]
        /// Runs made, the spoilt ones too.
        public let attempts: Int
    }

    /// Runs the measurement (blocking; a few seconds).
    public func run() throws(AnalyzerFailure) -> Result {
        let run = stimulusRun
        let recording = try run.record { rate throws(AnalyzerFailure) in
            let (_, tone) = try SteppedSine.tone(frequency: Self.toneFrequency, levelDBFS: Self.toneLevelDBFS, sampleRate: rate)
            return [tone, [Float](repeating: 0, count: tone.count)]
        }
        let rate = recording.sampleRate
        let (stimulus, _) = try SteppedSine.tone(frequency: Self.toneFrequency, levelDBFS: Self.toneLevelDBFS, sampleRate: rate)
        let fft = RealFFT(length: stimulus.blockLength)
        let quasiPeak = QuasiPeakMeter(sampleRate: rate)
        var channels: [Channel] = []
        for index in inputPorts.indices {
            let toneBlock = SteppedSine.analysedBlock(of: recording.captures[0][index], stimulus)
            let tone = HarmonicAnalysis.analyse(toneBlock, sampleRate: rate, fundamentalBin: stimulus.bin, highestOrder: 2, fft: fft)
            guard tone.fundamentalDBFS >= SteppedSine.signalFloorDBFS else {
                throw .noSignal(inputPort: inputPorts[index], outputPort: outputPorts[index], levelDBFS: tone.fundamentalDBFS)
            }
            let residual = NoiseAnalysis.analyse(toneBlock, sampleRate: rate, excludedBins: [stimulus.bin], fft: fft)
            let idleBlock = SteppedSine.analysedBlock(of: recording.captures[1][index], stimulus)
            let idle = NoiseAnalysis.analyse(idleBlock, sampleRate: rate, fft: fft)
            let spectrum = NoiseSpectrum.analyse(idleBlock, sampleRate: rate, centres: NoiseSpectrum.centres(perOctave: 3), fft: fft)
            channels.append(Channel(outputPort: outputPorts[index], inputPort: inputPorts[index], idle: idle, idleSpectrum: spectrum,
                                    quasiPeak468DBFS: quasiPeak.weightedNoiseDBFS(idleBlock, fft: fft),
                                    toneDBFS: tone.fundamentalDBFS, residual: residual))
        }
        return Result(serverName: serverName, sampleRate: rate, periodFrames: recording.periodFrames,
                      toneFrequency: stimulus.frequency, channels: channels, attempts: recording.attempts)
    }
}
