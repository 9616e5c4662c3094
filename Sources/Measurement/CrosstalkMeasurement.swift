import Foundation

/// Crosstalk between the channels of a path, and how well they match, in
/// one session in measurement mode (`StimulusRun`): each output is driven
/// in turn, alone, while every input is read.
/// * At 997 Hz (−1 dBFS, a coherent block): what each other input shows of
///   the tone against what the driven channel's own input shows, dB; and
///   each channel's own gain and phase, for their match.
/// * Against frequency: a sweep on each output alone; each other input's
///   response over the driven channel's own, dB, at 1/3-octave points.
/// An input the tone does not reach when its own output is driven is no
/// signal. A victim that shows digital silence has no crosstalk figure but
/// that (−∞: none at all), never a floor dressed as one.
public struct CrosstalkMeasurement: Sendable, AnalyzerMeasurement {
    /// The JACK server the session opens on.
    public var serverName: String
    /// Output port each channel is driven on.
    public var outputPorts: [String]
    /// Input port each channel is read from (as many as outputs).
    public var inputPorts: [String]
    /// The sweep's length, seconds.
    public var sweepSeconds = 2.0
    /// Runs to try when xruns spoil them.
    public var maximumAttempts = 3
    /// The session's JACK client name.
    public var clientName = "jas-analyze"
    /// Called when a run was spoilt and is measured again, with what spoilt it.
    public var onSpoiltRun: (@Sendable (String) -> Void)?
    /// Told when a run starts, and of interruptions and the measuring again after them.
    public var onNotice: (@Sendable (AnalyzerNotice) -> Void)?

    /// The tone: frequency (Hz) and level (dBFS).
    public static let toneFrequency = 997.0
    /// The tone's level, dBFS.
    public static let toneLevelDBFS = -1.0

    /// A measurement on `serverName`, `outputPorts[i]` read back on `inputPorts[i]`.
    public init(serverName: String, outputPorts: [String], inputPorts: [String]) {
        self.serverName = serverName
        self.outputPorts = outputPorts
        self.inputPorts = inputPorts
    }

    /// A channel's own path at 997 Hz.
    public struct Channel: Sendable, Equatable {
        /// The channel's output port.
        public let outputPort: String
        /// The channel's input port.
        public let inputPort: String
        /// Its gain (dB) and phase (degrees) at 997 Hz.
        public let gainDB: Double
        /// Its phase at 997 Hz, degrees.
        public let phaseDegrees: Double
    }

    /// What one driven channel put into one other.
    public struct Leak: Sendable, Equatable {
        /// The driven channel's index, and the one that heard it.
        public let driven: Int
        /// The index of the channel that heard it.
        public let victim: Int
        /// At 997 Hz, dB against the driven channel's own input (−∞: digital silence).
        public let crosstalkDB: Double
        /// Against frequency: (Hz, dB) at 1/3-octave points of the sweep.
        public let response: [(frequency: Double, crosstalkDB: Double)]

        public static func == (a: Leak, b: Leak) -> Bool {
            a.driven == b.driven && a.victim == b.victim && a.crosstalkDB == b.crosstalkDB
                && a.response.map(\.frequency) == b.response.map(\.frequency)
                && a.response.map(\.crosstalkDB) == b.response.map(\.crosstalkDB)
        }
    }

    /// What the measurement found.
    public struct Result: Sendable, AnalyzerResult {
        /// The server measured on.
        public let serverName: String
        /// The server's sample rate, Hz.
        public let sampleRate: Int
        /// The server's period, frames.
        public let periodFrames: Int
        /// Each channel's own path at 997 Hz.
        public let channels: [Channel]
        /// Every driven channel into every other.
        public let leaks: [Leak]
        /// Runs made, the spoilt ones too.
        public let attempts: Int

        /// The spread of the channels' gains (dB) and phases (degrees) at 997 Hz.
        public var gainMatchDB: Double { (channels.map(\.gainDB).max() ?? 0) - (channels.map(\.gainDB).min() ?? 0) }
        /// The spread of the channels' phases at 997 Hz, degrees.
        public var phaseMatchDegrees: Double {
            let phases = channels.map { HarmonicAnalysis.wrapped($0.phaseDegrees - (channels.first?.phaseDegrees ?? 0)) }
            return (phases.max() ?? 0) - (phases.min() ?? 0)
        }
    }

    /// Runs the measurement (blocking; two runs per channel).
    public func run() throws(AnalyzerFailure) -> Result {
        guard outputPorts.count >= 2 else {
            throw .invalidSetting("crosstalk needs two channels or more: give --out and --in twice or more")
        }
        let run = stimulusRun
        var sweep: SweepStimulus?
        var played: [Float] = []
        let count = outputPorts.count
        let recording = try run.record { (rate: Int) throws(AnalyzerFailure) -> [StimulusRun.Stimulus] in
            let (_, tone) = try SteppedSine.tone(frequency: Self.toneFrequency, levelDBFS: Self.toneLevelDBFS, sampleRate: rate)
            let stimulus = SweepStimulus(seconds: sweepSeconds, levelDBFS: -6, sampleRate: rate)
            sweep = stimulus
            played = stimulus.samples()
            return (0..<count).flatMap { driven in
                [StimulusRun.Stimulus(samples: tone, outputs: [driven]), StimulusRun.Stimulus(samples: played, outputs: [driven])]
            }
        }
        guard let sweep else { throw .invalidSetting("no sweep was made") }
        let rate = recording.sampleRate
        let (tone, _) = try SteppedSine.tone(frequency: Self.toneFrequency, levelDBFS: Self.toneLevelDBFS, sampleRate: rate)
        let fft = RealFFT(length: tone.blockLength)
        let reference = SweepAnalysis.SweepReference(sweep: sweep, played: played, highestOrder: 0)
        let thirds = SweepAnalysis.logFrequencies(from: sweep.startFrequency, to: sweep.endFrequency, perOctave: 3)
        var channels: [Channel] = []
        var leaks: [Leak] = []
        for driven in 0..<count {
            let toneCaptures = recording.captures[2 * driven], sweepCaptures = recording.captures[2 * driven + 1]
            let heard = (0..<count).map { input in
                HarmonicAnalysis.analyse(SteppedSine.analysedBlock(of: toneCaptures[input], tone), sampleRate: rate,
                                         fundamentalBin: tone.bin, highestOrder: 2, fft: fft)
            }
            let own = heard[driven]
            guard own.fundamentalDBFS >= SteppedSine.signalFloorDBFS else {
                throw .noSignal(inputPort: inputPorts[driven], outputPort: outputPorts[driven], levelDBFS: own.fundamentalDBFS)
            }
            channels.append(Channel(outputPort: outputPorts[driven], inputPort: inputPorts[driven],
                                    gainDB: own.fundamentalDBFS - Self.toneLevelDBFS, phaseDegrees: own.phaseDegrees))
            let ownResponse = SweepAnalysis.analyse(recorded: sweepCaptures[driven], reference: reference).points(at: thirds)
            for victim in 0..<count where victim != driven {
                let leaked = SweepAnalysis.analyse(recorded: sweepCaptures[victim], reference: reference).points(at: thirds)
                let response = zip(ownResponse, leaked).map { ($0.frequency, $1.magnitudeDB - $0.magnitudeDB) }
                leaks.append(Leak(driven: driven, victim: victim, crosstalkDB: heard[victim].fundamentalDBFS - own.fundamentalDBFS,
                                  response: response))
            }
        }
        return Result(serverName: serverName, sampleRate: rate, periodFrames: recording.periodFrames, channels: channels,
                      leaks: leaks, attempts: recording.attempts)
    }
}
