import ArgumentParser
import Foundation
import Measurement

/// `jas analyze thd`: a stepped sine at one frequency and level, or, with
/// `--up-to`, at climbing levels (THD+N against level, the maximum level).
struct AnalyzeTHD: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thd",
        abstract: "A stepped sine: gain, harmonics 2 to N, THD and THD+N (AES17) at one frequency and level, or against level up to --up-to.",
        discussion: """
            Plays the tone on every --out port and reads the matching --in port (give them in pairs). The tone \
            sits on a bin of a one-second analysis block (coherent sampling: 1 Hz steps, no window), half a \
            second after it starts. THD: harmonics 2 to --harmonics below half the sample rate. THD+N: all but \
            the fundamental in 20 Hz-20 kHz. A run an xrun fell into is spoilt, said, and measured again (three \
            runs at most). With --up-to, the tone climbs from --level to --up-to in --step steps without stopping \
            (10 ms ramps, 0.2 s to settle, a one-second block each): THD+N against level, and the maximum level, \
            where THD+N first reaches --max-level-at (AES17: 1 %, -40 dB).
            """
    )

    @OptionGroup var path: AnalyzerPath

    @Option(help: "The tone's frequency, e.g. 997Hz, 1kHz or 997 (default 997 Hz; played on the nearest whole hertz).")
    var frequency = "997Hz"

    @Option(parsing: .unconditional, help: "The tone's level, e.g. -1dBFS or -20 (default -1 dBFS; AES17: a full-scale sine is 0 dBFS).")
    var level = "-1dBFS"

    @Option(help: "The highest harmonic order THD counts (default 9).")
    var harmonics = 9

    @Option(name: .customLong("up-to"), parsing: .unconditional,
            help: "Climb from --level to this level, e.g. 0dBFS: THD+N against level and the maximum level.")
    var upTo: String?

    @Option(parsing: .unconditional, help: "With --up-to: the step between levels, e.g. 1dB or 0.5 (default 1 dB).")
    var step = "1dB"

    @Option(name: .customLong("max-level-at"), parsing: .unconditional,
            help: "With --up-to: the THD+N that marks the maximum level, e.g. 1% or -40dB (default 1 %, AES17).")
    var maxLevelAt = "1%"

    func validate() throws {
        _ = try OptionCheck.hertz(frequency)
        _ = try OptionCheck.dBFS(level)
        if harmonics < 2 { throw ValidationError("--harmonics must be 2 or more, got \(harmonics)") }
        if let upTo {
            // Every option of the climb parsed once, as the run parses them.
            let measurement = try staircase(on: "")
            if measurement.toDBFS <= measurement.fromDBFS {
                throw ValidationError("--up-to (\(upTo)) must be above --level (\(level)): the tone climbs from one to the other")
            }
            do {
                _ = try measurement.levels()
            } catch {
                throw ValidationError(error.description)
            }
        }
        try path.requireLimits(for: [upTo == nil ? "thd" : "thd_vs_level"])
    }

    /// The staircase the options ask for, on `server`.
    private func staircase(on server: String) throws -> LevelStaircase {
        var measurement = LevelStaircase(serverName: server, outputPorts: path.outputs, inputPorts: path.inputs)
        measurement.frequency = try OptionCheck.hertz(frequency)
        measurement.fromDBFS = try OptionCheck.dBFS(level)
        measurement.toDBFS = try OptionCheck.dBFS(upTo ?? "0", option: "--up-to")
        measurement.stepDB = try OptionCheck.decibels(step, "--step", in: 0.01...40)
        measurement.maximumLevelTHDN = try OptionCheck.distortion(maxLevelAt, "--max-level-at")
        measurement.highestOrder = harmonics
        return measurement
    }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        if upTo != nil {
            var measurement = try staircase(on: choice.name)
            path.watch(&measurement, as: "thd")
            let result = try path.measuring("thd") { () throws(AnalyzerFailure) in try measurement.run() }
            try path.tell([(result, Self.describe(result))])
            return
        }
        var measurement = SteppedSine(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        measurement.frequency = try OptionCheck.hertz(frequency)
        measurement.levelDBFS = try OptionCheck.dBFS(level)
        measurement.highestOrder = harmonics
        path.watch(&measurement, as: "thd")
        let result = try path.measuring("thd") { () throws(AnalyzerFailure) in try measurement.run() }
        try path.tell([(result, Self.describe(result))])
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

    /// The text summary of THD+N against level.
    static func describe(_ result: LevelStaircase.Result) -> String {
        func figure(_ value: Double, _ format: String) -> String {
            value.isFinite ? String(format: format, (value * 100).rounded() / 100 + 0.0) : "below the float floor"
        }
        var lines = [String(format: "THD+N against level at %.0f Hz on '%@' (%d Hz, period %d frames); %@",
                            result.frequency, result.serverName, result.sampleRate, result.periodFrames,
                            SteppedSine.Result.levelConvention)]
        for channel in result.channels {
            lines.append("  \(Output.safe(channel.outputPort)) → \(Output.safe(channel.inputPort)):")
            lines.append("      level dBFS   gain dB   THD dB   THD+N dB    THD+N %")
            for step in channel.steps {
                let analysis = step.analysis
                lines.append(String(format: "    %10.2f  ", step.levelDBFS) + figure(step.gainDB, "%+8.2f") + "  "
                             + figure(analysis.thdDB, "%7.2f") + "  " + figure(analysis.thdPlusNoiseDB, "%9.2f")
                             + String(format: "  %9.5f", analysis.thdPlusNoisePercent))
            }
            let mark = String(format: "THD+N %.1f dB (%.3g %%)", result.maximumLevelTHDN, pow(10, result.maximumLevelTHDN / 20) * 100)
            switch channel.maximumLevel {
            case let .crossed(level):
                lines.append(String(format: "    maximum level %.2f dBFS (%@ reached there)", level, mark))
            case .fullScale:
                lines.append("    maximum level 0 dBFS: full scale, \(mark) not reached below it")
            case let .notReached(highest):
                lines.append(String(format: "    maximum level above %.2f dBFS: %@ not reached; climb further with --up-to", highest, mark))
            case let .reachedAtLowest(lowest):
                lines.append(String(format: "    maximum level below %.2f dBFS: %@ already reached there; start lower with --level",
                                    lowest, mark))
            }
        }
        if result.attempts > 1 { lines.append("  (\(result.attempts) runs: the ones before were spoilt by xruns)") }
        return lines.joined(separator: "\n")
    }
}
