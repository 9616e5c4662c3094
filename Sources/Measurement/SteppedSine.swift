import Foundation
import JackAudioSession
import JackKit

/// A stepped-sine measurement: one session in measurement mode plays a tone
/// (`SineStimulus`) out of each output port and records each input port,
/// then analyses a coherent block of what came back (`HarmonicAnalysis`):
/// gain, harmonics, THD and THD+N. The block starts half a second into the
/// tone, past the path's delay and the tone's fade-in. A run an xrun fell
/// into is spoilt: it is said and measured again, never analysed.
public struct SteppedSine: Sendable {
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
    public var clientName = "jas-analyze"
    /// Called when a run was spoilt and is measured again, with what spoilt it.
    public var onSpoiltRun: (@Sendable (String) -> Void)?

    /// The lowest level a fed input shows at the tone's frequency, dBFS: less is no signal.
    public static let signalFloorDBFS = -100.0
    /// Where the analysed block starts in the run, seconds: past the path's delay and the fade-in.
    static let settleSeconds = 0.5
    static let fadeInSeconds = 0.02

    public init(serverName: String, outputPorts: [String], inputPorts: [String]) {
        self.serverName = serverName
        self.outputPorts = outputPorts
        self.inputPorts = inputPorts
    }

    /// What one channel measured.
    public struct Channel: Sendable, Equatable {
        public let outputPort: String
        public let inputPort: String
        public let analysis: HarmonicAnalysis
        /// The fundamental's level out against in, dB.
        public let gainDB: Double
    }

    /// What the measurement found.
    public struct Result: Sendable, Equatable {
        public let serverName: String
        public let sampleRate: Int
        public let periodFrames: Int
        /// The frequency played, Hz, and its level, dBFS.
        public let frequency: Double
        public let levelDBFS: Double
        public let channels: [Channel]
        /// Runs made, the last one analysed.
        public let attempts: Int
    }

    /// Why there is no result.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The session could not be set up or activated (a port missing, no server).
        case session(AudioSessionError)
        /// Every run had xruns in it, or the server ran no cycles.
        case spoilt(attempts: Int, reason: String)
        /// An input showed no tone: nothing feeds it, or the path is broken.
        case noSignal(inputPort: String, outputPort: String, levelDBFS: Double)
        /// A setting out of range.
        case invalidSetting(String)

        public var description: String {
            switch self {
            case let .session(error):
                return error.message
            case let .spoilt(attempts, reason):
                return "every run was spoilt (\(attempts) tried; the last: \(reason)): no figure is given; "
                    + "measure again on a quieter machine, or at a longer period"
            case let .noSignal(input, output, level):
                let shown = level.isFinite ? String(format: "%.1f dBFS", level) : "digital silence"
                return "no tone came back on '\(input)' from '\(output)' (\(shown) at the tone's frequency): nothing feeds "
                    + "that input, or the path between them is broken; connect '\(output)' to what feeds '\(input)'"
            case let .invalidSetting(reason):
                return reason
            }
        }
    }

    /// Runs the measurement (blocking; seconds).
    public func run() throws(Failure) -> Result {
        guard !outputPorts.isEmpty, outputPorts.count == inputPorts.count else {
            throw .invalidSetting("give as many --in ports as --out ports (\(outputPorts.count) --out, \(inputPorts.count) --in)")
        }
        guard levelDBFS <= 0, levelDBFS > -200 else {
            throw .invalidSetting("the level must be at most 0 dBFS (a full-scale sine), not \(levelDBFS)")
        }
        guard highestOrder >= 2 else { throw .invalidSetting("the highest harmonic must be 2 or more, not \(highestOrder)") }
        // Capturing its own test tone is what the caller asked for.
        let session = AudioSession(clientName: clientName, serverName: serverName, recordConsent: .givenByCaller)
        defer { session.close() }
        do {
            try session.prepareMeasurement(outputPorts: outputPorts, inputPorts: inputPorts)
            try session.setActive(true)
        } catch {
            throw .session(error)
        }
        let rate = Int(session.sampleRate)
        let period = session.ioBufferFrames
        guard frequency >= 1, frequency < Double(rate) / 2 else {
            throw .invalidSetting("the frequency must be between 1 Hz and half the sample rate (\(rate / 2) Hz), not \(frequency) Hz")
        }
        let stimulus = SineStimulus(frequency: frequency, levelDBFS: levelDBFS, sampleRate: rate)
        let settle = Int(Self.settleSeconds * Double(rate))
        let recorder = RealtimeStimulusRecorder(
            stimulus: stimulus.samples(count: settle + stimulus.blockLength, fadeIn: Int(Self.fadeInSeconds * Double(rate))),
            channels: inputPorts.count)
        do {
            // The render block goes in while the session is inactive, as every measurement here does.
            try session.setActive(false)
            session.setRenderBlock(recorder.renderBlock)
            try session.setActive(true)
        } catch {
            throw .session(error)
        }
        var attempts = 0
        var lastProblem = ""
        while attempts < maximumAttempts {
            attempts += 1
            let xrunsBefore = session.xrunCount
            if attempts == 1 { recorder.arm() } else { recorder.playAgain() }
            _ = recorder.waitUntilComplete(timeout: Double(recorder.length) / Double(rate) * 3 + 5)
            let xruns = session.xrunCount - xrunsBefore
            if !recorder.isComplete {
                lastProblem = "the server ran no cycles for \(Int(Double(recorder.length) / Double(rate) * 3 + 5)) s"
            } else if xruns > 0 {
                lastProblem = "\(xruns) xrun\(xruns == 1 ? "" : "s") during the run"
            } else {
                let fft = RealFFT(length: stimulus.blockLength)
                var channels: [Channel] = []
                for index in inputPorts.indices {
                    let block = recorder.captured(channel: index)[settle..<(settle + stimulus.blockLength)]
                    let analysis = HarmonicAnalysis.analyse(block, sampleRate: rate, fundamentalBin: stimulus.bin,
                                                            highestOrder: highestOrder, fft: fft)
                    guard analysis.fundamentalDBFS >= Self.signalFloorDBFS else {
                        throw .noSignal(inputPort: inputPorts[index], outputPort: outputPorts[index],
                                        levelDBFS: analysis.fundamentalDBFS)
                    }
                    channels.append(Channel(outputPort: outputPorts[index], inputPort: inputPorts[index], analysis: analysis,
                                            gainDB: analysis.fundamentalDBFS - levelDBFS))
                }
                return Result(serverName: serverName, sampleRate: rate, periodFrames: period, frequency: stimulus.frequency,
                              levelDBFS: levelDBFS, channels: channels, attempts: attempts)
            }
            if attempts < maximumAttempts { onSpoiltRun?(lastProblem) }
            // Not complete: wait for the run to finish before playing it again (the real-time side owns it until then).
            if !recorder.isComplete { break }
        }
        throw .spoilt(attempts: attempts, reason: lastProblem)
    }
}
