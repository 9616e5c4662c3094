import Foundation

/// THD+N against level, and the maximum level: a stepped sine that climbs
/// in steps of a few dB (AES17's "THD+N versus level"), each step analysed
/// as `SteppedSine` analyses its one level, and the level at which THD+N
/// first reaches a given figure (AES17's maximum level: 1 %, −40 dB, by
/// default).
///
/// The steps are one stimulus, one run: the tone never stops, so the path
/// settles once; each change of level is a short raised-cosine ramp, and a
/// step's coherent block starts `settleSeconds` after its ramp (past the
/// path's delay and any filter's ringing).
public struct LevelStaircase: Sendable, AnalyzerMeasurement {
    /// The JACK server the session opens on.
    public var serverName: String
    /// Output port each channel's tone is sent to.
    public var outputPorts: [String]
    /// Input port each channel is read from (as many as outputs).
    public var inputPorts: [String]
    /// The tone's frequency, Hz; played on the nearest bin (1 Hz apart).
    public var frequency: Double = 997
    /// The first (lowest) level, dBFS.
    public var fromDBFS: Double = -40
    /// The last (highest) level, dBFS; the steps stop at it, even if the step does not reach it evenly.
    public var toDBFS: Double = 0
    /// The step between levels, dB.
    public var stepDB: Double = 1
    /// The THD+N, dB against the fundamental, that marks the maximum level (AES17: 1 %, −40 dB).
    public var maximumLevelTHDN: Double = -40
    /// The highest harmonic order each step's THD counts.
    public var highestOrder = 9
    /// Runs to try when xruns spoil them.
    public var maximumAttempts = 3
    /// The session's JACK client name.
    public var clientName = "jas-analyze"
    /// Called when a run was spoilt and is measured again, with what spoilt it.
    public var onSpoiltRun: (@Sendable (String) -> Void)?
    /// Told when a run starts, and of interruptions and the measuring again after them.
    public var onNotice: (@Sendable (AnalyzerNotice) -> Void)?

    /// The ramp between two levels, seconds.
    static let rampSeconds = 0.01
    /// From the end of a ramp to the step's block, seconds.
    static let settleSeconds = 0.2
    /// The most steps one staircase holds (at about 1.2 s each).
    public static let mostSteps = 121

    /// A staircase on `serverName`, `outputPorts[i]` read back on `inputPorts[i]`.
    public init(serverName: String, outputPorts: [String], inputPorts: [String]) {
        self.serverName = serverName
        self.outputPorts = outputPorts
        self.inputPorts = inputPorts
    }

    /// One level of one channel.
    public struct Step: Sendable, Equatable {
        /// The level played, dBFS.
        public let levelDBFS: Double
        /// What the input held at it.
        public let analysis: HarmonicAnalysis
        /// The fundamental's level out against in, dB.
        public var gainDB: Double { analysis.fundamentalDBFS - levelDBFS }
    }

    /// Where THD+N reached the figure that marks the maximum level.
    public enum MaximumLevel: Sendable, Equatable {
        /// Between two steps: the level, dBFS, interpolated in dB between them.
        case crossed(Double)
        /// Not reached up to 0 dBFS: full scale is the maximum (a digital path clips there).
        case fullScale
        /// Not reached up to the highest step, which is below full scale: not known.
        case notReached(highestDBFS: Double)
        /// Reached already at the lowest step: below the staircase, not known.
        case reachedAtLowest(lowestDBFS: Double)

        /// The maximum level, dBFS, when it is known.
        public var dBFS: Double? {
            switch self {
            case let .crossed(level): return level
            case .fullScale: return 0
            case .notReached, .reachedAtLowest: return nil
            }
        }
    }

    /// What one channel measured.
    public struct Channel: Sendable, Equatable {
        /// The channel's output port.
        public let outputPort: String
        /// The channel's input port.
        public let inputPort: String
        /// One entry per level, lowest first.
        public let steps: [Step]
        /// Where THD+N reached the marking figure.
        public let maximumLevel: MaximumLevel
    }

    /// What the measurement found.
    public struct Result: Sendable, Equatable, AnalyzerResult {
        /// The server measured on.
        public let serverName: String
        /// The server's sample rate, Hz.
        public let sampleRate: Int
        /// The server's period, frames.
        public let periodFrames: Int
        /// The frequency played, Hz.
        public let frequency: Double
        /// The THD+N that marks the maximum level, dB.
        public let maximumLevelTHDN: Double
        /// One entry per --out/--in pair.
        public let channels: [Channel]
        /// Runs made, the last one analysed.
        public let attempts: Int
    }

    /// Why there is no result.
    public typealias Failure = AnalyzerFailure

    /// The levels played, lowest first: from `fromDBFS` by `stepDB`, and `toDBFS` last.
    public func levels() throws(Failure) -> [Double] {
        guard fromDBFS < toDBFS, toDBFS <= 0, fromDBFS > -200 else {
            throw .invalidSetting("the levels must climb to at most 0 dBFS: from \(fromDBFS) to \(toDBFS) dBFS")
        }
        guard stepDB >= 0.01 else { throw .invalidSetting("the step must be at least 0.01 dB, not \(stepDB)") }
        let count = Int(((toDBFS - fromDBFS) / stepDB + 1e-9).rounded(.down))
        var levels = (0...count).map { fromDBFS + Double($0) * stepDB }
        if toDBFS - levels[levels.count - 1] > 1e-9 { levels.append(toDBFS) }
        guard levels.count <= Self.mostSteps else {
            throw .invalidSetting("\(levels.count) steps is more than \(Self.mostSteps); take a larger step or a narrower range")
        }
        return levels
    }

    /// Runs the measurement (blocking; about 1.2 s a step).
    public func run() throws(Failure) -> Result {
        guard highestOrder >= 2 else { throw .invalidSetting("the highest harmonic must be 2 or more, not \(highestOrder)") }
        let levels = try levels()
        guard frequency >= 1 else { throw .invalidSetting("the frequency must be at least 1 Hz, not \(frequency) Hz") }
        let recording = try stimulusRun.record { rate throws(Failure) in
            [try Self.staircase(frequency: frequency, levels: levels, sampleRate: rate).samples]
        }
        let rate = recording.sampleRate
        let played = try Self.staircase(frequency: frequency, levels: levels, sampleRate: rate)
        let unit = played.tone
        let fft = RealFFT(length: unit.blockLength)
        var channels: [Channel] = []
        for index in inputPorts.indices {
            let captured = recording.captures[0][index]
            let steps = zip(levels, played.blockStarts).map { level, start in
                Step(levelDBFS: level,
                     analysis: HarmonicAnalysis.analyse(captured[start..<(start + unit.blockLength)], sampleRate: rate,
                                                        fundamentalBin: unit.bin, highestOrder: highestOrder, fft: fft))
            }
            // The loudest step shows whether anything came back at all.
            let loudest = steps[steps.count - 1].analysis.fundamentalDBFS
            guard loudest >= SteppedSine.signalFloorDBFS else {
                throw .noSignal(inputPort: inputPorts[index], outputPort: outputPorts[index], levelDBFS: loudest)
            }
            channels.append(Channel(outputPort: outputPorts[index], inputPort: inputPorts[index], steps: steps,
                                    maximumLevel: Self.maximumLevel(steps.map { ($0.levelDBFS, $0.analysis.thdPlusNoiseDB) },
                                                                    reaching: maximumLevelTHDN)))
        }
        return Result(serverName: serverName, sampleRate: rate, periodFrames: recording.periodFrames, frequency: unit.frequency,
                      maximumLevelTHDN: maximumLevelTHDN, channels: channels, attempts: recording.attempts)
    }

    /// The staircase played: the tone faded in at the first level, each later
    /// level reached by a raised-cosine ramp, and where each step's block
    /// starts in it.
    static func staircase(frequency: Double, levels: [Double], sampleRate: Int)
        throws(Failure) -> (samples: [Float], blockStarts: [Int], tone: SineStimulus) {
        guard frequency < Double(sampleRate) / 2 else {
            throw .invalidSetting("the frequency must be below half the sample rate (\(sampleRate / 2) Hz), not \(frequency) Hz")
        }
        let unit = SineStimulus(frequency: frequency, levelDBFS: 0, sampleRate: sampleRate)
        let ramp = Int(rampSeconds * Double(sampleRate))
        let firstSettle = Int(SteppedSine.settleSeconds * Double(sampleRate))
        let settle = Int(settleSeconds * Double(sampleRate))
        var envelope: [Double] = []
        var starts: [Int] = []
        var previous = 0.0
        for (index, level) in levels.enumerated() {
            let amplitude = pow(10, level / 20)
            let rampLength = index == 0 ? Int(SteppedSine.fadeInSeconds * Double(sampleRate)) : ramp
            for n in 0..<rampLength {
                let eased = 0.5 - 0.5 * cos(Double.pi * Double(n) / Double(rampLength))
                envelope.append(previous + (amplitude - previous) * eased)
            }
            let hold = (index == 0 ? max(0, firstSettle - rampLength) : settle)
            envelope.append(contentsOf: repeatElement(amplitude, count: hold))
            starts.append(envelope.count)
            envelope.append(contentsOf: repeatElement(amplitude, count: unit.blockLength))
            previous = amplitude
        }
        let tone = unit.samples(count: envelope.count)
        return (zip(tone, envelope).map { Float(Double($0) * $1) }, starts, unit)
    }

    /// Where THD+N, given per level (lowest level first), first reaches `figure` dB.
    public static func maximumLevel(_ steps: [(levelDBFS: Double, thdPlusNoiseDB: Double)], reaching figure: Double) -> MaximumLevel {
        guard let first = steps.first, let last = steps.last else { return .notReached(highestDBFS: 0) }
        guard let index = steps.firstIndex(where: { $0.thdPlusNoiseDB >= figure }) else {
            return last.levelDBFS >= 0 ? .fullScale : .notReached(highestDBFS: last.levelDBFS)
        }
        guard index > 0 else { return .reachedAtLowest(lowestDBFS: first.levelDBFS) }
        let below = steps[index - 1], above = steps[index]
        // Straight in dB between the two steps (a THD+N of digital silence is far below: the step above alone).
        guard below.thdPlusNoiseDB.isFinite else { return .crossed(above.levelDBFS) }
        let fraction = (figure - below.thdPlusNoiseDB) / (above.thdPlusNoiseDB - below.thdPlusNoiseDB)
        return .crossed(below.levelDBFS + fraction * (above.levelDBFS - below.levelDBFS))
    }
}
