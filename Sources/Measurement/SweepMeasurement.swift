import Foundation

/// A path's frequency response, from a synchronized exponential sweep
/// (`SweepStimulus`) played on every `--out`/`--in` pair in one session in
/// measurement mode (`StimulusRun`), each analysed by `SweepAnalysis`; then
/// a silent pass, whose recording is the noise floor against frequency
/// (`NoiseSpectrum`, 1/3 octave).
public struct SweepMeasurement: Sendable, AnalyzerMeasurement {
    /// The JACK server the session opens on.
    public var serverName: String
    /// Output port each channel is driven on.
    public var outputPorts: [String]
    /// Input port each channel is read from (as many as outputs).
    public var inputPorts: [String]
    /// The sweep's band, Hz, its length, seconds, and its peak level, dBFS.
    public var startFrequency = 20.0
    /// The sweep's end, Hz.
    public var endFrequency = 20_000.0
    /// The sweep's length, seconds.
    public var seconds = 5.0
    /// The sweep's peak level, dBFS.
    public var levelDBFS = -6.0
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
    public struct Channel: Sendable {
        /// The channel's output port.
        public let outputPort: String
        /// The channel's input port.
        public let inputPort: String
        /// Its response and harmonics.
        public let analysis: SweepAnalysis
        /// The noise floor against frequency, from the silent pass, at the 1/3-octave points from the sweep's start.
        public let noiseFloor: NoiseSpectrum
    }

    /// What the measurement found.
    public struct Result: Sendable, AnalyzerResult {
        /// The server measured on.
        public let serverName: String
        /// The server's sample rate, Hz.
        public let sampleRate: Int
        /// The server's period, frames.
        public let periodFrames: Int
        /// The sweep played.
        public let sweep: SweepStimulus
        /// One entry per --out/--in pair.
        public let channels: [Channel]
        /// Runs made, the spoilt ones too.
        public let attempts: Int
    }

    /// The silent pass: half a second to settle, then a one-second block (1 Hz bins).
    static func silentPassFrames(_ rate: Int) -> Int { Int(SteppedSine.settleSeconds * Double(rate)) + rate + rate % 2 }

    /// The lowest peak an input must show: less is no signal, dBFS.
    public static let signalFloorDBFS = -100.0

    /// The lengths a sweep may have, seconds.
    public static let lengthRange = 0.5...600.0

    /// Runs the measurement (blocking; the sweep's length and a little more).
    public func run() throws(AnalyzerFailure) -> Result {
        guard levelDBFS <= 0, levelDBFS > -200 else {
            throw .invalidSetting("the level must be at most 0 dBFS (the sweep's peak at full scale), not \(levelDBFS)")
        }
        guard startFrequency >= 1, endFrequency > startFrequency * 2 else {
            throw .invalidSetting("the sweep must span an octave or more from 1 Hz up, not \(startFrequency) to \(endFrequency) Hz")
        }
        guard Self.lengthRange.contains(seconds) else {
            throw .invalidSetting(String(format: "the sweep's length must be between %g s and %g s, not %g s",
                                         Self.lengthRange.lowerBound, Self.lengthRange.upperBound, seconds))
        }
        var attempts = 0
        while true {
            let (result, lostStart) = try measureOnce()
            attempts += result.attempts
            guard let lostStart else {
                return Result(serverName: result.serverName, sampleRate: result.sampleRate, periodFrames: result.periodFrames,
                              sweep: result.sweep, channels: result.channels, attempts: attempts)
            }
            guard attempts < maximumAttempts else { throw .spoilt(attempts: attempts, reason: lostStart) }
            onSpoiltRun?(lostStart)
        }
    }

    /// One session's runs (the sweep, the silent pass) and their analysis,
    /// and what spoilt it if the sweep's start was lost (`lostStart`).
    private func measureOnce() throws(AnalyzerFailure) -> (Result, lostStart: String?) {
        let run = stimulusRun
        var sweep: SweepStimulus?
        var played: [Float] = []
        let recording = try run.record { rate throws(AnalyzerFailure) in
            guard endFrequency < Double(rate) / 2 else {
                throw .invalidSetting("the sweep's end, \(endFrequency) Hz, must lie below half the sample rate (\(rate / 2) Hz)")
            }
            let stimulus = SweepStimulus(startFrequency: startFrequency, endFrequency: endFrequency, seconds: seconds,
                                         levelDBFS: levelDBFS, sampleRate: rate)
            sweep = stimulus
            played = [Float](repeating: 0, count: Self.leadFrames(rate)) + stimulus.samples()
            // Then the silent pass: digital silence, for the noise floor, past the settling time.
            return [played, [Float](repeating: 0, count: Self.silentPassFrames(rate))]
        }
        guard let sweep else { throw .invalidSetting("no sweep was made") }
        var channels: [Channel] = []
        let reference = SweepAnalysis.SweepReference(sweep: sweep, played: played)
        let rate = recording.sampleRate
        let fft = RealFFT(length: rate + rate % 2)
        let centres = SweepAnalysis.logFrequencies(from: sweep.startFrequency, to: sweep.endFrequency, perOctave: 3)
        var lostStart: String?
        for index in inputPorts.indices {
            let recorded = recording.captures[0][index]
            let peak = recorded.reduce(0) { max($0, abs($1)) }
            guard 20 * log10(Double(peak)) >= Self.signalFloorDBFS else {
                throw .noSignal(inputPort: inputPorts[index], outputPort: outputPorts[index], levelDBFS: 20 * log10(Double(peak)))
            }
            let analysis = SweepAnalysis.analyse(recorded: recorded, reference: reference)
            if lostStart == nil, let late = Self.lateStart(recorded, sweepStart: Self.leadFrames(rate), delay: analysis.delayFrames,
                                                           period: recording.periodFrames) {
                lostStart = "the sweep's first \(late) frames came back as silence on '\(inputPorts[index])' (its start lost: "
                    + "a dropout the server did not count as an xrun)"
            }
            let silent = recording.captures[1][index]
            let settle = silent.count - fft.length
            channels.append(Channel(outputPort: outputPorts[index], inputPort: inputPorts[index], analysis: analysis,
                                    noiseFloor: NoiseSpectrum.analyse(silent[settle...], sampleRate: rate, centres: centres, fft: fft)))
        }
        return (Result(serverName: serverName, sampleRate: recording.sampleRate, periodFrames: recording.periodFrames,
                       sweep: sweep, channels: channels, attempts: recording.attempts), lostStart)
    }

    /// The silence a run plays before its sweep, frames: 100 ms. A run's
    /// first cycle can be lost without an xrun (seen on PipeWire under load:
    /// its null sink silent for the run's first quantum, run after run),
    /// which then costs silence, not the sweep's start.
    static func leadFrames(_ rate: Int) -> Int { rate / 10 }

    /// How many of the sweep's first frames came back as silence, counted
    /// from the sweep's start (`sweepStart` frames into the run) at the
    /// delay the impulse response's peak gives, if a period or more (and 64
    /// frames at least): the path lost the sweep's start (nil: it did not).
    /// Counted from the sweep's start, not from its first sounding frame: a
    /// lost cycle holds one frame less of sound than a period, as the
    /// fade-in starts at zero. A path answers at its delay or before it (a
    /// filter's response rises before its peak), never after; one that
    /// rounds to 16 bits without dither stays at zero through the fade-in's
    /// first few dozen frames, which is less.
    static func lateStart(_ recorded: [Float], sweepStart: Int, delay: Int, period: Int) -> Int? {
        guard let heard = recorded.firstIndex(where: { $0 != 0 }) else { return nil }
        let late = heard - delay - sweepStart
        return late >= max(64, period) ? late : nil
    }
}
