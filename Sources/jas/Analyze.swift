import ArgumentParser
import Foundation
import Measurement

/// `jas analyze`: the audio analyzer (measurement mode, headless). Its
/// measurements are subcommands; each prints a summary, or JSON Lines.
struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a path as an audio analyzer does: response, THD and THD+N, noise and dynamic range (AES17), IMD.",
        discussion: """
            Each measurement is one session in measurement mode on --out/--in port pairs (the bit-exact direct \
            path). Levels are dBFS per AES17: a full-scale sine is 0 dBFS. Without --server a private headless \
            jackd with loopback ports is started and stopped. With --limits FILE (YAML), a verdict table \
            follows the figures. Exit status: 0 measured (and within the limits), 1 a figure outside its limits, \
            2 could not measure (xruns in every run, no signal on an input, a port that does not exist), with the \
            reason.
            """,
        subcommands: [AnalyzeResponse.self, AnalyzeTHD.self, AnalyzeNoise.self, AnalyzeIMD.self, AnalyzeAll.self]
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
        try path.requireLimits(for: ["thd"])
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

    func validate() throws { try path.requireLimits(for: ["noise"]) }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        var measurement = NoiseMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        measurement.onSpoiltRun = path.sayingSpoiltRuns(of: "noise")
        let result = try path.measuring("noise") { () throws(AnalyzerFailure) in try measurement.run() }
        try path.tell([(result, Self.describe(result))])
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

/// `jas analyze imd`: intermodulation distortion, SMPTE, DIN and CCIF.
struct AnalyzeIMD: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imd",
        abstract: "Intermodulation distortion: SMPTE (60 Hz + 7 kHz, 4:1), DIN (250 Hz + 8 kHz, 4:1), CCIF (19 + 20 kHz).",
        discussion: """
            Plays each test's two tones on every --out port (the composite's peak that of a sine at --level) and \
            reads the matching --in port. SMPTE and DIN: IEC 60268-3 modulation distortion, the sidebands of the \
            high tone at ±1, 2 and 3 times the low one. CCIF: IEC 60268-3 difference-frequency distortion, the \
            1 kHz difference tone (d2) and the 18 and 21 kHz ones (d3) against the two tones' sum.
            """
    )

    @OptionGroup var path: AnalyzerPath

    @Option(name: .customLong("test"), help: "smpte, din, ccif or all (repeat for several; default all).")
    var tests: [String] = []

    @Option(parsing: .unconditional, help: "The composite's level: its peak is a sine's at this level, e.g. -1dBFS or -6 (default -1 dBFS).")
    var level = "-1dBFS"

    func validate() throws {
        _ = try chosenTests()
        _ = try AnalyzeTHD.dBFS(level)
        try path.requireLimits(for: ["imd"])
    }

    private func chosenTests() throws -> [IntermodulationTest] {
        if tests.isEmpty || tests.contains(where: { $0.lowercased() == "all" }) { return IntermodulationTest.allCases }
        return try tests.map { name in
            guard let test = IntermodulationTest(rawValue: name.lowercased()) else {
                throw ValidationError("--test must be smpte, din, ccif or all, not '\(name)'")
            }
            return test
        }
    }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        var measurement = IntermodulationMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        measurement.tests = try chosenTests()
        measurement.levelDBFS = try AnalyzeTHD.dBFS(level)
        measurement.onSpoiltRun = path.sayingSpoiltRuns(of: "imd")
        let result = try path.measuring("imd") { () throws(AnalyzerFailure) in try measurement.run() }
        try path.tell([(result, Self.describe(result))])
    }

    static func describe(_ result: IntermodulationMeasurement.Result) -> String {
        func dB(_ value: Double) -> String {
            value.isFinite ? String(format: "%+.2f dB", (value * 100).rounded() / 100 + 0.0) : "below the float floor"
        }
        var lines = [String(format: "intermodulation at %.2f dBFS (the composite's peak) on '%@' (%d Hz, period %d frames); %@",
                            result.levelDBFS, result.serverName, result.sampleRate, result.periodFrames,
                            SteppedSine.Result.levelConvention)]
        for channel in result.channels {
            lines.append("  \(Output.safe(channel.outputPort)) → \(Output.safe(channel.inputPort)):")
            for analysis in channel.analyses {
                let test = analysis.test
                lines.append(String(format: "    %@ (%.0f Hz + %.0f Hz, %.0f:1): IMD %@ (%.5f %%)", test.rawValue.uppercased(),
                                    test.lowFrequency, test.highFrequency, test.amplitudeRatio, dB(analysis.dB), analysis.percent))
            }
        }
        // Each definition once, with the tests it counts.
        let tests = result.channels.first?.analyses.map(\.test) ?? []
        for definition in tests.map(\.definition).reduce(into: [String](), { if !$0.contains($1) { $0.append($1) } }) {
            let names = tests.filter { $0.definition == definition }.map { $0.rawValue.uppercased() }
            lines.append("  \(names.joined(separator: ", ")): \(definition)")
        }
        if result.attempts > result.channels.first.map({ $0.analyses.count }) ?? 0 {
            lines.append("  (\(result.attempts) runs: the ones spoilt by xruns were measured again)")
        }
        return lines.joined(separator: "\n")
    }
}

/// `jas analyze response`: magnitude and phase from a sweep.
struct AnalyzeResponse: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "response",
        abstract: "Frequency response (magnitude and phase) from a synchronized exponential sweep.",
        discussion: """
            Plays a sweep (Novak's synchronized exponential sweep) on every --out port and reads the matching \
            --in port; the response is the recording's spectrum over the sweep's, in the sweep's band, with the \
            path's whole-frame delay (the impulse response's peak) removed from the phase. Printed at 1/3 octave; \
            JSON, --frd and --csv at 1/24 octave, each point the nearest FFT bin's (not smoothed). --frd writes \
            what REW and Open Sound Meter import (frequency, dB, degrees); with several channels each file gets \
            the channel's number before its extension.
            """
    )

    @OptionGroup var path: AnalyzerPath

    @Option(help: "The sweep's start, e.g. 20Hz (default 20 Hz).")
    var start = "20Hz"

    @Option(help: "The sweep's end, e.g. 20kHz (default 20 kHz; below half the sample rate).")
    var end = "20kHz"

    @Option(help: "The sweep's length, e.g. 5s or 500ms (default 5 s; 0.5 s to 10 min).")
    var length = "5s"

    @Option(parsing: .unconditional, help: "The sweep's peak level, e.g. -6dBFS or -12 (default -6 dBFS).")
    var level = "-6dBFS"

    @Option(help: "Write the response to this FRD file (frequency Hz, magnitude dB, phase degrees; 1/24 octave).")
    var frd: String?

    @Option(help: "Write the response to this CSV file (a header, then frequency_hz,magnitude_db,phase_deg).")
    var csv: String?

    func validate() throws {
        _ = try AnalyzeTHD.hertz(start, option: "--start")
        _ = try AnalyzeTHD.hertz(end, option: "--end")
        _ = try OptionCheck.duration(length, "--length", in: 0.5...600, example: "5s or 500ms")
        _ = try AnalyzeTHD.dBFS(level)
        try path.requireLimits(for: ["response"])
    }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        var measurement = SweepMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        measurement.startFrequency = try AnalyzeTHD.hertz(start, option: "--start")
        measurement.endFrequency = try AnalyzeTHD.hertz(end, option: "--end")
        measurement.seconds = try OptionCheck.duration(length, "--length", in: 0.5...600, example: "5s or 500ms")
        measurement.levelDBFS = try AnalyzeTHD.dBFS(level)
        measurement.onSpoiltRun = path.sayingSpoiltRuns(of: "response")
        if !path.json { Output.diagnostic("jas analyze response: sweeping \(start) to \(end) over \(length)…") }
        let result = try path.measuring("response") { () throws(AnalyzerFailure) in try measurement.run() }
        try write(result)
        try path.tell([(result, Self.describe(result))])
    }

    /// The --frd and --csv files, one per channel.
    private func write(_ result: SweepMeasurement.Result) throws {
        let frequencies = SweepAnalysis.logFrequencies(from: result.sweep.startFrequency, to: result.sweep.endFrequency,
                                                       perOctave: SweepMeasurement.Result.pointsPerOctave)
        for (index, channel) in result.channels.enumerated() {
            let points = channel.analysis.points(at: frequencies)
            func named(_ path: String) -> String {
                guard result.channels.count > 1 else { return path }
                let ext = (path as NSString).pathExtension
                let stem = (path as NSString).deletingPathExtension
                return ext.isEmpty ? "\(stem)-\(index + 1)" : "\(stem)-\(index + 1).\(ext)"
            }
            let header = "jas analyze response: \(channel.outputPort) -> \(channel.inputPort), delay \(channel.analysis.delayFrames) frames removed"
            if let frd {
                let lines = ["* \(header)", "* frequency_hz magnitude_db phase_deg"]
                    + points.map { String(format: "%.4f %.4f %.3f", $0.frequency, $0.magnitudeDB, $0.phaseDegrees) }
                try Self.save(lines, to: named(frd))
            }
            if let csv {
                let lines = ["frequency_hz,magnitude_db,phase_deg"]
                    + points.map { String(format: "%.4f,%.4f,%.3f", $0.frequency, $0.magnitudeDB, $0.phaseDegrees) }
                try Self.save(lines, to: named(csv))
            }
        }
    }

    private static func save(_ lines: [String], to path: String) throws {
        do {
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            Output.diagnostic("jas analyze response: cannot write '\(path)': \(error.localizedDescription); the figures follow")
            throw ExitCode(2)
        }
    }

    static func describe(_ result: SweepMeasurement.Result) -> String {
        let sweep = result.sweep
        var lines = [String(format: "response from a %.1f s sweep, %.0f Hz to %.0f Hz at %.2f dBFS, on '%@' (%d Hz, period %d frames)",
                            Double(sweep.sweepFrames) / Double(result.sampleRate), sweep.startFrequency, sweep.endFrequency,
                            sweep.levelDBFS, result.serverName, result.sampleRate, result.periodFrames)]
        let frequencies = SweepAnalysis.logFrequencies(from: sweep.startFrequency, to: sweep.endFrequency, perOctave: 3)
        for channel in result.channels {
            lines.append("  \(Output.safe(channel.outputPort)) → \(Output.safe(channel.inputPort)) "
                         + "(delay \(channel.analysis.delayFrames) frames removed):")
            for (frequency, point) in zip(frequencies, channel.analysis.points(at: frequencies)) {
                let thd = channel.analysis.distortion(at: frequency).map { distortion in
                    distortion.thdDB.map { String(format: "  THD %7.2f dB", ($0 * 100).rounded() / 100 + 0.0) }
                        ?? String(format: "  THD < %.0f dB (the method's floor %.0f dB + 20)", distortion.floorDB + SweepAnalysis.floorMargin,
                                  distortion.floorDB)
                } ?? ""
                lines.append(String(format: "    %9.1f Hz  %+8.3f dB  %+8.2f°", point.frequency, (point.magnitudeDB * 1000).rounded() / 1000 + 0.0,
                                    (point.phaseDegrees * 100).rounded() / 100 + 0.0) + thd)
            }
        }
        lines.append("  " + SweepMeasurement.Result.definition)
        return lines.joined(separator: "\n")
    }
}

/// `jas analyze all`: every measurement in one go, one verdict.
struct AnalyzeAll: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all",
        abstract: "Response, THD at 997 Hz, noise and dynamic range, and IMD, in one go; with --limits, one verdict for all.",
        discussion: """
            A 5 s sweep from 20 Hz to 20 kHz at -6 dBFS, the stepped sine at 997 Hz and -1 dBFS, then noise and dynamic range, then SMPTE, DIN and CCIF \
            intermodulation at -1 dBFS, on the same --out/--in pairs and server. Exit status: 0 measured (and \
            within --limits), 1 a figure outside its limits, 2 a measurement could not be made (nothing after it runs).
            """
    )

    @OptionGroup var path: AnalyzerPath

    func validate() throws { try path.requireLimits(for: ["response", "thd", "noise", "imd"]) }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        var response = SweepMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        response.onSpoiltRun = path.sayingSpoiltRuns(of: "all (response)")
        let responseResult = try path.measuring("all (response)") { () throws(AnalyzerFailure) in try response.run() }
        var thd = SteppedSine(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        thd.onSpoiltRun = path.sayingSpoiltRuns(of: "all (thd)")
        let thdResult = try path.measuring("all (thd)") { () throws(AnalyzerFailure) in try thd.run() }
        var noise = NoiseMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        noise.onSpoiltRun = path.sayingSpoiltRuns(of: "all (noise)")
        let noiseResult = try path.measuring("all (noise)") { () throws(AnalyzerFailure) in try noise.run() }
        var imd = IntermodulationMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        imd.onSpoiltRun = path.sayingSpoiltRuns(of: "all (imd)")
        let imdResult = try path.measuring("all (imd)") { () throws(AnalyzerFailure) in try imd.run() }
        try path.tell([(responseResult, AnalyzeResponse.describe(responseResult)), (thdResult, AnalyzeTHD.describe(thdResult)), (noiseResult, AnalyzeNoise.describe(noiseResult)),
                       (imdResult, AnalyzeIMD.describe(imdResult))])
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

    @Option(help: "A limits file (YAML): each measurement's figures and their bounds, e.g. 'thd: {thd_n_db: {max: -90}}'. Prints a verdict table; exit status 1 when a figure is out of bounds.")
    var limits: String?

    func validate() throws {
        if let limits {
            do {
                _ = try AnalyzerLimits(contentsOf: limits)
            } catch {
                throw ValidationError(error.description)
            }
        }
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

    /// Requires the limits file, if given, to name `measurement`: limits for others only would check nothing.
    func requireLimits(for measurements: [String]) throws {
        guard let limits, let loaded = try? AnalyzerLimits(contentsOf: limits) else { return }
        if !measurements.contains(where: { loaded.bounds[$0] != nil }) {
            throw ValidationError("'\(limits)' has no limits for \(measurements.joined(separator: " or ")); it has "
                                  + loaded.bounds.keys.sorted().joined(separator: ", "))
        }
    }

    /// Prints each result (a JSON line, or its text), then, with --limits,
    /// the verdict; exit status 1 when a figure is out of bounds.
    func tell(_ results: [(result: any LimitedResult & Encodable, text: String)]) throws {
        for (result, text) in results {
            if json { Output.jsonLine(result) } else { Output.line(text) }
        }
        guard let limits else { return }
        let loaded: AnalyzerLimits
        do {
            loaded = try AnalyzerLimits(contentsOf: limits)
        } catch {
            Output.diagnostic("jas analyze: \(error.description)")
            throw ExitCode(2)
        }
        let rows = results.flatMap { AnalyzerVerdict.rows(loaded, measurement: type(of: $0.result).measurementName,
                                                          channels: $0.result.limitedFigures) }
        let verdict = AnalyzerVerdict(rows: rows, source: limits)
        if json { Output.jsonLine(verdict) } else { Output.line(Self.describe(verdict)) }
        if !verdict.passed { throw ExitCode(1) }
    }

    /// The verdict table.
    static func describe(_ verdict: AnalyzerVerdict) -> String {
        func number(_ value: Double?) -> String {
            guard let value else { return "" }
            if value.isNaN { return "not measured" }
            if value.isInfinite { return value < 0 ? "-inf (silence)" : "+inf" }
            return String(format: "%.2f", (value * 100).rounded() / 100 + 0.0)
        }
        let header = ["measurement", "channel", "figure", "measured", "min", "max", "verdict"]
        let rows = verdict.rows.map { row in
            [row.measurement, "\(Output.safe(row.outputPort)) → \(Output.safe(row.inputPort))", row.figure, number(row.value),
             number(row.bound.min), number(row.bound.max), row.passed ? "pass" : "FAIL"]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            let padded = zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
            return String(padded.reversed().drop { $0 == " " }.reversed())
        }
        let failed = verdict.rows.filter { !$0.passed }.count
        return (["limits from '\(Output.safe(verdict.source))':", line(header)] + rows.map(line)
                + [verdict.passed ? "PASS: all \(verdict.rows.count) figures within their limits"
                   : "FAIL: \(failed) of \(verdict.rows.count) figures outside their limits"]).joined(separator: "\n")
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
    static func hertz(_ text: String, option: String = "--frequency") throws -> Double {
        var number = text.lowercased().trimmingCharacters(in: .whitespaces)
        var scale = 1.0
        if number.hasSuffix("khz") {
            scale = 1000
            number.removeLast(3)
        } else if number.hasSuffix("hz") {
            number.removeLast(2)
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, value > 0 else {
            throw ValidationError("\(option) must be a frequency, e.g. 997Hz, 1kHz or 997, not '\(text)'")
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
