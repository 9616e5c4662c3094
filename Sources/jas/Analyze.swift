import ArgumentParser
import Foundation
import Measurement

/// `jas analyze`: the audio analyzer (measurement mode, headless). Its
/// measurements are subcommands; each prints a summary, or JSON Lines.
struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a path as an audio analyzer does: gain, harmonics, THD and THD+N, noise and dynamic range (AES17).",
        discussion: """
            Each measurement is one session in measurement mode on --out/--in port pairs (the bit-exact direct \
            path). Levels are dBFS per AES17: a full-scale sine is 0 dBFS. Without --server a private headless \
            jackd with loopback ports is started and stopped. Exit status: 0 measured, 2 could not measure \
            (xruns in every run, no signal on an input, a port that does not exist), with the reason.
            """,
        subcommands: [AnalyzeTHD.self, AnalyzeNoise.self]
    )
}

/// `jas analyze thd`: a stepped sine at one frequency and level.
struct AnalyzeTHD: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thd",
        abstract: "A stepped sine: gain, harmonics 2 to N, THD and THD+N (AES17) at one frequency and level.",
        discussion: """
            Plays the tone on every --out port and reads the matching --in port (give them in pairs). The tone \
            sits on a bin of a one-second analysis block (coherent sampling: 1 Hz steps, no window), half a \
            second after it starts. THD: harmonics 2 to --harmonics below half the sample rate. THD+N: all but \
            the fundamental in 20 Hz-20 kHz. A run an xrun fell into is spoilt, said, and measured again (three \
            runs at most).
            """
    )

    @OptionGroup var path: AnalyzerPath

    @Option(help: "The tone's frequency, e.g. 997Hz, 1kHz or 997 (default 997 Hz; played on the nearest whole hertz).")
    var frequency = "997Hz"

    @Option(parsing: .unconditional, help: "The tone's level, e.g. -1dBFS or -20 (default -1 dBFS; AES17: a full-scale sine is 0 dBFS).")
    var level = "-1dBFS"

    @Option(help: "The highest harmonic order THD counts (default 9).")
    var harmonics = 9

    func validate() throws {
        _ = try Self.hertz(frequency)
        _ = try Self.dBFS(level)
        if harmonics < 2 { throw ValidationError("--harmonics must be 2 or more, got \(harmonics)") }
    }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        var measurement = SteppedSine(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        measurement.frequency = try Self.hertz(frequency)
        measurement.levelDBFS = try Self.dBFS(level)
        measurement.highestOrder = harmonics
        measurement.onSpoiltRun = path.sayingSpoiltRuns(of: "thd")
        let result = try path.measuring("thd") { () throws(AnalyzerFailure) in try measurement.run() }
        if path.json {
            Output.jsonLine(result)
        } else {
            Output.line(Self.describe(result))
        }
    }

    /// The text summary.
    static func describe(_ result: SteppedSine.Result) -> String {
        // To a hundredth, never "-0.00".
        func dB(_ value: Double) -> String {
            value.isFinite ? String(format: "%+.2f dB", (value * 100).rounded() / 100 + 0.0) : "below the float floor"
        }
        var lines = [String(format: "stepped sine %.0f Hz at %.2f dBFS on '%@' (%d Hz, period %d frames); %@",
                            result.frequency, result.levelDBFS, result.serverName, result.sampleRate, result.periodFrames,
                            SteppedSine.Result.levelConvention)]
        for channel in result.channels {
            let analysis = channel.analysis
            lines.append("  \(Output.safe(channel.outputPort)) → \(Output.safe(channel.inputPort)): gain \(dB(channel.gainDB)), "
                         + "THD \(dB(analysis.thdDB)) (\(String(format: "%.5f", analysis.thdPercent)) %), "
                         + "THD+N \(dB(analysis.thdPlusNoiseDB)) (\(String(format: "%.5f", analysis.thdPlusNoisePercent)) %)")
            let loudest = analysis.harmonics.filter { $0.levelDBFS.isFinite }.sorted { $0.levelDB > $1.levelDB }.prefix(3)
            if !loudest.isEmpty {
                lines.append("    loudest harmonics: " + loudest.map {
                    String(format: "H%d %.0f Hz %.2f dB", $0.order, $0.frequency, $0.levelDB)
                }.joined(separator: ", "))
            }
        }
        if result.attempts > 1 { lines.append("  (\(result.attempts) runs: the ones before were spoilt by xruns)") }
        return lines.joined(separator: "\n")
    }
}

/// `jas analyze noise`: idle-channel noise, SNR and dynamic range.
struct AnalyzeNoise: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "noise",
        abstract: "Noise (unweighted, A, C, CCIR-RMS), SNR against full scale and AES17 dynamic range.",
        discussion: """
            Two runs on every --out/--in pair. Idle channel: digital silence out, the noise that comes back in \
            20 Hz-20 kHz, unweighted, A- and C-weighted (IEC 61672-1) and CCIR-RMS (the ITU-R BS.468 curve less \
            5.63 dB, RMS detector); the SNR is against full scale. Dynamic range (AES17): 997 Hz at -60 dBFS, the \
            tone removed, the residual A-weighted and CCIR-RMS, plus 60 dB. A bit-exact path's idle noise is \
            digital silence (shown so; null in JSON). An input the tone does not reach is no signal (exit 2).
            """
    )

    @OptionGroup var path: AnalyzerPath

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        var measurement = NoiseMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        measurement.onSpoiltRun = path.sayingSpoiltRuns(of: "noise")
        let result = try path.measuring("noise") { () throws(AnalyzerFailure) in try measurement.run() }
        if path.json {
            Output.jsonLine(result)
        } else {
            Output.line(Self.describe(result))
        }
    }

    /// The text summary.
    static func describe(_ result: NoiseMeasurement.Result) -> String {
        func level(_ value: Double) -> String {
            value.isFinite ? String(format: "%.2f dBFS", (value * 100).rounded() / 100 + 0.0) : "digital silence"
        }
        func ratio(_ value: Double) -> String {
            value.isFinite ? String(format: "%.2f dB", (value * 100).rounded() / 100 + 0.0) : "beyond measure (digital silence)"
        }
        var lines = [String(format: "noise and dynamic range on '%@' (%d Hz, period %d frames); %@",
                            result.serverName, result.sampleRate, result.periodFrames, SteppedSine.Result.levelConvention)]
        for channel in result.channels {
            lines.append("  \(Output.safe(channel.outputPort)) → \(Output.safe(channel.inputPort)):")
            lines.append("    idle noise: " + Weighting.allCases.map { "\(Self.label($0)) \(level(channel.idle.level($0)))" }
                .joined(separator: ", "))
            lines.append("    SNR against full scale \(ratio(channel.signalToNoiseDB)); dynamic range (997 Hz at -60 dBFS): "
                         + NoiseMeasurement.dynamicRangeWeightings.map { "\(ratio(channel.dynamicRangeDB($0))) \(Self.label($0))" }
                .joined(separator: ", "))
        }
        lines.append("  weightings: " + Weighting.allCases.map { $0.definition }.joined(separator: "; "))
        if result.attempts > 2 { lines.append("  (\(result.attempts) runs for 2 measured: the others were spoilt by xruns)") }
        return lines.joined(separator: "\n")
    }

    private static func label(_ weighting: Weighting) -> String {
        switch weighting {
        case .unweighted: return "unweighted"
        case .a: return "A"
        case .c: return "C"
        case .ccirRMS: return "CCIR-RMS"
        }
    }
}

/// The path every analyzer measurement runs on: the server, the port pairs,
/// and how results and failures are told.
struct AnalyzerPath: ParsableArguments {
    @Option(help: "Use this running JACK server instead of starting a private one.")
    var server: String?

    @Option(name: .customLong("out"), help: "Port the test signal is sent to (repeat for more channels; default loopback:playback_1).")
    var outputPorts: [String] = []

    @Option(name: .customLong("in"), help: "Port the signal comes back on (as many as --out; default loopback:capture_1).")
    var inputPorts: [String] = []

    @Option(help: "The private server's period in frames (default 256).")
    var period: Int?

    @Flag(help: "One JSON object (a line) instead of text.")
    var json = false

    func validate() throws {
        try OptionCheck.period(period)
        if outputPorts.count != inputPorts.count {
            throw ValidationError("give --out and --in in pairs: \(outputPorts.count) --out, \(inputPorts.count) --in")
        }
    }

    var outputs: [String] { outputPorts.isEmpty ? ["loopback:playback_1"] : outputPorts }
    var inputs: [String] { inputPorts.isEmpty ? ["loopback:capture_1"] : inputPorts }

    /// The server to measure on: `--server`, or a private one for this command.
    func serverChoice() throws -> ServerChoice {
        try ServerChoice(server: server, command: "analyze", period: period ?? 256, quiet: json)
    }

    /// What says a spoilt run of `measurement` on stderr.
    func sayingSpoiltRuns(of measurement: String) -> @Sendable (String) -> Void {
        { reason in Output.diagnostic("jas analyze \(measurement): a run was spoilt (\(reason)); measuring again") }
    }

    /// The result of `measure`, or the reason there is none on stderr and exit status 2.
    func measuring<Result>(_ measurement: String, _ measure: () throws(AnalyzerFailure) -> Result) throws -> Result {
        do {
            return try measure()
        } catch {
            Output.diagnostic("jas analyze \(measurement): \(error.description)")
            throw ExitCode(2)
        }
    }
}

extension AnalyzeTHD {
    /// A frequency as people type it: `997Hz`, `1kHz`, `997`.
    static func hertz(_ text: String) throws -> Double {
        var number = text.lowercased().trimmingCharacters(in: .whitespaces)
        var scale = 1.0
        if number.hasSuffix("khz") {
            scale = 1000
            number.removeLast(3)
        } else if number.hasSuffix("hz") {
            number.removeLast(2)
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, value > 0 else {
            throw ValidationError("--frequency must be a frequency, e.g. 997Hz, 1kHz or 997, not '\(text)'")
        }
        return value * scale
    }

    /// A level as people type it: `-20dBFS`, `-20`, `0dBFS`.
    static func dBFS(_ text: String) throws -> Double {
        var number = text.lowercased().trimmingCharacters(in: .whitespaces)
        for suffix in ["dbfs", "db"] where number.hasSuffix(suffix) {
            number.removeLast(suffix.count)
            break
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, value <= 0, value > -200 else {
            throw ValidationError("--level must be a level of at most 0 dBFS (a full-scale sine, AES17), e.g. -1dBFS or -20, "
                                  + "not '\(text)'")
        }
        return value
    }
}
