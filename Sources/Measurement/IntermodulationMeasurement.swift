import Foundation

/// Intermodulation distortion of a path (`IntermodulationTest`: SMPTE, DIN,
/// CCIF), in one session in measurement mode (`StimulusRun`): each test's
/// two tones on every `--out`/`--in` pair, the composite's peak that of a
/// sine at `levelDBFS`.
public struct IntermodulationMeasurement: Sendable, AnalyzerMeasurement {
    /// The JACK server the session opens on.
    public var serverName: String
    /// Output port each channel is driven on.
    public var outputPorts: [String]
    /// Input port each channel is read from (as many as outputs).
    public var inputPorts: [String]
    /// The tests, in the order they are run.
    public var tests: [IntermodulationTest] = IntermodulationTest.allCases
    /// The composite's level: its peak is that of a sine at this level, dBFS.
    public var levelDBFS: Double = -1
    /// Runs to try when xruns spoil them.
    public var maximumAttempts = 3
    /// The session's JACK client name.
    public var clientName = "jas-analyze"
    /// Called when a run was spoilt and is measured again, with what spoilt it.
    public var onSpoiltRun: (@Sendable (String) -> Void)?
    /// Told when a run starts, and of interruptions and the measuring again after them.
    public var onNotice: (@Sendable (AnalyzerNotice) -> Void)?

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
        /// One analysis per test, in the order run.
        public let analyses: [IntermodulationAnalysis]
    }

    /// What the measurement found.
    public struct Result: Sendable, Equatable, AnalyzerResult {
        /// The server measured on.
        public let serverName: String
        /// The server's sample rate, Hz.
        public let sampleRate: Int
        /// The server's period, frames.
        public let periodFrames: Int
        /// The composite's level, dBFS.
        public let levelDBFS: Double
        /// One entry per --out/--in pair.
        public let channels: [Channel]
        /// Runs made, the spoilt ones too.
        public let attempts: Int
    }

    /// The peak amplitudes of `test`'s low and high tone at `levelDBFS`.
    public static func amplitudes(_ test: IntermodulationTest, levelDBFS: Double) -> (low: Double, high: Double) {
        let peak = pow(10, levelDBFS / 20)
        let high = peak / (1 + test.amplitudeRatio)
        return (peak - high, high)
    }

    /// Runs every test (blocking; a few seconds).
    public func run() throws(AnalyzerFailure) -> Result {
        guard levelDBFS <= 0, levelDBFS > -200 else {
            throw .invalidSetting("the level must be at most 0 dBFS (the composite's peak at full scale), not \(levelDBFS)")
        }
        guard !tests.isEmpty else { throw .invalidSetting("name at least one intermodulation test (smpte, din, ccif)") }
        let run = stimulusRun
        let recording = try run.record { rate throws(AnalyzerFailure) in try tests.map { test throws(AnalyzerFailure) in
            try Self.stimulus(test, levelDBFS: levelDBFS, sampleRate: rate)
        } }
        let rate = recording.sampleRate
        // Any tone's timing: the block analysed starts after the settling time, as every tone's does.
        let block = SineStimulus(frequency: 1000, levelDBFS: 0, sampleRate: rate)
        let fft = RealFFT(length: block.blockLength)
        var channels: [Channel] = []
        for index in inputPorts.indices {
            var analyses: [IntermodulationAnalysis] = []
            for (testIndex, test) in tests.enumerated() {
                let analysis = IntermodulationAnalysis.analyse(
                    SteppedSine.analysedBlock(of: recording.captures[testIndex][index], block),
                    sampleRate: rate, test: test, fft: fft)
                guard analysis.highToneDBFS >= SteppedSine.signalFloorDBFS else {
                    throw .noSignal(inputPort: inputPorts[index], outputPort: outputPorts[index], levelDBFS: analysis.highToneDBFS)
                }
                analyses.append(analysis)
            }
            channels.append(Channel(outputPort: outputPorts[index], inputPort: inputPorts[index], analyses: analyses))
        }
        return Result(serverName: serverName, sampleRate: rate, periodFrames: recording.periodFrames, levelDBFS: levelDBFS,
                      channels: channels, attempts: recording.attempts)
    }

    /// What is played for `test`: both tones, on bins, faded in together, settling time and block.
    static func stimulus(_ test: IntermodulationTest, levelDBFS: Double, sampleRate: Int) throws(AnalyzerFailure) -> [Float] {
        guard test.highFrequency < Double(sampleRate) / 2 else {
            throw .invalidSetting("the \(test.rawValue) test's \(Int(test.highFrequency)) Hz tone needs a sample rate above "
                                  + "\(Int(2 * test.highFrequency)) Hz; the server runs at \(sampleRate) Hz")
        }
        let (low, high) = amplitudes(test, levelDBFS: levelDBFS)
        var composite: [Float]? = nil
        for (frequency, amplitude) in [(test.lowFrequency, low), (test.highFrequency, high)] {
            let (_, tone) = try SteppedSine.tone(frequency: frequency, levelDBFS: 20 * log10(amplitude), sampleRate: sampleRate)
            composite = composite.map { zip($0, tone).map(+) } ?? tone
        }
        return composite ?? []
    }
}
