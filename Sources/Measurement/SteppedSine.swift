import Foundation
import JackAudioSession
import JackKit

/// A stepped-sine measurement: one session in measurement mode plays a tone
/// (`SineStimulus`) out of each output port and records each input port,
/// then analyses a coherent block of what came back (`HarmonicAnalysis`):
/// gain, harmonics, THD and THD+N. The block starts half a second into the
/// tone, past the path's delay and the tone's fade-in. A run an xrun fell
/// into is spoilt: it is said and measured again, never analysed.
public struct SteppedSine: Sendable, AnalyzerMeasurement {
    /// The JACK server the session opens on.
    public var serverName: String
    /// Output port each channel's tone is sent to.
    public var outputPorts: [String]
    /// Input port each channel is read from (as many as outputs).
    public var inputPorts: [String]
    /// The tone's frequency, Hz; played on the nearest bin (1 Hz apart).
    public var frequency: Double = 997
    /// The tone's level, dBFS (AES17: a full-scale sine is 0 dBFS).
    public var levelDBFS: Double = -1
    /// The highest harmonic order THD counts.
    public var highestOrder = 9
    /// Runs to try when xruns spoil them.
    public var maximumAttempts = 3
    /// The session's JACK client name.
    public var clientName = "jas-analyze"
    /// Called when a run was spoilt and is measured again, with what spoilt it.
    public var onSpoiltRun: (@Sendable (String) -> Void)?
    /// Told when a run starts, and of interruptions and the measuring again after them.
    public var onNotice: (@Sendable (AnalyzerNotice) -> Void)?

    /// The lowest level a fed input shows at the tone's frequency, dBFS: less is no signal.
    public static let signalFloorDBFS = -100.0
    /// Where the analysed block starts in the run, seconds: past the path's delay and the fade-in.
    static let settleSeconds = 0.5
    static let fadeInSeconds = 0.02

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
        /// What its input held.
        public let analysis: HarmonicAnalysis
        /// The fundamental's level out against in, dB.
        public let gainDB: Double
        /// The THD+N residual's spectrum: all but the fundamental's bin, in 1/12-octave bands, dBFS.
        public let residualSpectrum: NoiseSpectrum
    }

    /// What the measurement found.
    public struct Result: Sendable, Equatable, AnalyzerResult {
        /// The server measured on.
        public let serverName: String
        /// The server's sample rate, Hz.
        public let sampleRate: Int
        /// The server's period, frames.
        public let periodFrames: Int
        /// The frequency played, Hz, and its level, dBFS.
        public let frequency: Double
        /// The tone's level, dBFS.
        public let levelDBFS: Double
        /// One entry per --out/--in pair.
        public let channels: [Channel]
        /// Runs made, the last one analysed.
        public let attempts: Int
    }

    /// Why there is no result.
    public typealias Failure = AnalyzerFailure

    /// Runs the measurement (blocking; seconds).
    public func run() throws(Failure) -> Result {
        guard levelDBFS <= 0, levelDBFS > -200 else {
            throw .invalidSetting("the level must be at most 0 dBFS (a full-scale sine), not \(levelDBFS)")
        }
        guard highestOrder >= 2 else { throw .invalidSetting("the highest harmonic must be 2 or more, not \(highestOrder)") }
        let run = stimulusRun
        let recording = try run.record { rate throws(Failure) in
            [try Self.tone(frequency: frequency, levelDBFS: levelDBFS, sampleRate: rate).played]
        }
        let rate = recording.sampleRate
        let (stimulus, _) = try Self.tone(frequency: frequency, levelDBFS: levelDBFS, sampleRate: rate)
        let fft = RealFFT(length: stimulus.blockLength)
        var channels: [Channel] = []
        for index in inputPorts.indices {
            let block = Self.analysedBlock(of: recording.captures[0][index], stimulus)
            let analysis = HarmonicAnalysis.analyse(block, sampleRate: rate, fundamentalBin: stimulus.bin,
                                                    highestOrder: highestOrder, fft: fft)
            guard analysis.fundamentalDBFS >= Self.signalFloorDBFS else {
                throw .noSignal(inputPort: inputPorts[index], outputPort: outputPorts[index], levelDBFS: analysis.fundamentalDBFS)
            }
            let residual = NoiseSpectrum.analyse(block, sampleRate: rate, centres: NoiseSpectrum.centres(perOctave: 12), perOctave: 12,
                                                 excludedBins: [stimulus.bin], fft: fft)
            channels.append(Channel(outputPort: outputPorts[index], inputPort: inputPorts[index], analysis: analysis,
                                    gainDB: analysis.fundamentalDBFS - levelDBFS, residualSpectrum: residual))
        }
        return Result(serverName: serverName, sampleRate: rate, periodFrames: recording.periodFrames,
                      frequency: stimulus.frequency, levelDBFS: levelDBFS, channels: channels, attempts: recording.attempts)
    }

    /// The tone at `frequency` and `levelDBFS`, and what is played of it: the
    /// settling time (faded in) and the analysis block after it.
    static func tone(frequency: Double, levelDBFS: Double,
                     sampleRate: Int) throws(Failure) -> (stimulus: SineStimulus, played: [Float]) {
        guard frequency >= 1, frequency < Double(sampleRate) / 2 else {
            throw .invalidSetting("the frequency must be between 1 Hz and half the sample rate (\(sampleRate / 2) Hz), "
                                  + "not \(frequency) Hz")
        }
        let stimulus = SineStimulus(frequency: frequency, levelDBFS: levelDBFS, sampleRate: sampleRate)
        let settle = Int(settleSeconds * Double(sampleRate))
        return (stimulus, stimulus.samples(count: settle + stimulus.blockLength, fadeIn: Int(fadeInSeconds * Double(sampleRate))))
    }

    /// The coherent block analysed in what an input recorded of `tone`: past the settling time.
    static func analysedBlock(of captured: [Float], _ stimulus: SineStimulus) -> ArraySlice<Float> {
        let settle = Int(settleSeconds * Double(stimulus.sampleRate))
        return captured[settle..<(settle + stimulus.blockLength)]
    }
}
