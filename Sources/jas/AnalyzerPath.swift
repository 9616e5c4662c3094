import ArgumentParser
import ComplianceReport
import Foundation
import Measurement

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

    @Option(help: "Write a report page (one HTML file, no script): graphs of the response, phase, THD and crosstalk over frequency, the figures' tables and the verdict.")
    var report: String?

    func validate() throws {
        if let limits {
            do {
                _ = try AnalyzerLimits(contentsOf: limits)
            } catch {
                throw ValidationError(error.description)
            }
        }
        try OptionCheck.period(period)
        try OptionCheck.writableFolder(of: report, "--report")
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

    /// Sets `measurement` to tell, as `name`, of spoilt runs and of its
    /// progress on stderr (with --json, interruptions as JSON lines).
    func watch<Measurement: AnalyzerMeasurement>(_ measurement: inout Measurement, as name: String) {
        measurement.onSpoiltRun = { reason in Output.diagnostic("jas analyze \(name): a run was spoilt (\(reason)); measuring again") }
        let json = json
        measurement.onNotice = { notice in
            switch notice {
            case let .playing(run, of, seconds):
                Output.diagnostic(String(format: "jas analyze %@: playing %d of %d (%.1f s)…", name, run, of, seconds))
            case let .interrupted(by):
                if json { Output.jsonLine(notice) }
                Output.diagnostic("jas analyze \(name): interrupted by \(by); measuring again when it ends")
            case .resumed:
                if json { Output.jsonLine(notice) }
                Output.diagnostic("jas analyze \(name): resumed; the interrupted run is played again")
            }
        }
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
    /// `smoothing`: the report's response magnitude over 1/N octave.
    func tell(_ results: [(result: any LimitedResult & Encodable, text: String)], smoothing: Int? = nil) throws {
        for (result, text) in results {
            if json { Output.jsonLine(result) } else { Output.line(text) }
        }
        var verdict: AnalyzerVerdict?
        if let limits {
            let loaded: AnalyzerLimits
            do {
                loaded = try AnalyzerLimits(contentsOf: limits)
            } catch {
                Output.diagnostic("jas analyze: \(error.description)")
                throw ExitCode(2)
            }
            let rows = results.flatMap { AnalyzerVerdict.rows(loaded, measurement: type(of: $0.result).measurementName,
                                                              channels: $0.result.limitedFigures) }
            verdict = AnalyzerVerdict(rows: rows, source: limits)
        }
        if let verdict {
            if json { Output.jsonLine(verdict) } else { Output.line(Self.describe(verdict)) }
        }
        if let report { try write(report: report, results.map(\.result), verdict: verdict, smoothing: smoothing) }
        if verdict?.passed == false { throw ExitCode(1) }
    }

    /// The --report page: every result's graphs and tables, the verdict first.
    private func write(report path: String, _ results: [any LimitedResult & Encodable], verdict: AnalyzerVerdict?,
                       smoothing: Int?) throws {
        var page = AnalyzerReportPage()
        page.smoothing = smoothing
        for result in results {
            if let result = result as? SweepMeasurement.Result { page.response = result }
            if let result = result as? SteppedSine.Result { page.thd = result }
            if let result = result as? LevelStaircase.Result { page.levels = result }
            if let result = result as? NoiseMeasurement.Result { page.noise = result }
            if let result = result as? IntermodulationMeasurement.Result { page.imd = result }
            if let result = result as? CrosstalkMeasurement.Result { page.crosstalk = result }
        }
        page.verdict = verdict
        do {
            try page.html(title: "jas analyze").write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            Output.diagnostic("jas analyze: cannot write the report '\(path)': \(error.localizedDescription); the figures are above")
            throw ExitCode(2)
        }
        if !json { Output.diagnostic("jas analyze: the report is in '\(path)'") }
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
