import ArgumentParser
import Foundation
import Measurement

/// `jas analyze all`: every measurement in one go, one verdict.
struct AnalyzeAll: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all",
        abstract: "Response, THD at 997 Hz, noise and dynamic range, and IMD, in one go; with --limits, one verdict for all.",
        discussion: """
            With two --out/--in pairs or more, crosstalk and the channels' match last. When the limits file \
            holds thd_vs_level, THD+N against level too (997 Hz, -20 to 0 dBFS in 2 dB steps) and the maximum level. \
            A 5 s sweep from 20 Hz to 20 kHz at -6 dBFS, the stepped sine at 997 Hz and -1 dBFS, then noise and dynamic range, then SMPTE, DIN and CCIF \
            intermodulation at -1 dBFS, on the same --out/--in pairs and server. Exit status: 0 measured (and \
            within --limits), 1 a figure outside its limits, 2 a measurement could not be made (nothing after it runs).
            """
    )

    @OptionGroup var path: AnalyzerPath

    func validate() throws { try path.requireLimits(for: ["response", "thd", "thd_vs_level", "noise", "imd", "crosstalk"]) }

    /// Whether the limits file asks for THD+N against level (`thd_vs_level`).
    private var limitsTheMaximumLevel: Bool {
        guard let file = path.limits, let limits = try? AnalyzerLimits(contentsOf: file) else { return false }
        return limits.bounds["thd_vs_level"] != nil
    }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        var response = SweepMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        path.watch(&response, as: "all (response)")
        let responseResult = try path.measuring("all (response)") { () throws(AnalyzerFailure) in try response.run() }
        var thd = SteppedSine(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        path.watch(&thd, as: "all (thd)")
        let thdResult = try path.measuring("all (thd)") { () throws(AnalyzerFailure) in try thd.run() }
        var staircase: LevelStaircase.Result?
        if limitsTheMaximumLevel {
            var levels = LevelStaircase(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
            (levels.fromDBFS, levels.stepDB) = (-20, 2)
            path.watch(&levels, as: "all (thd_vs_level)")
            staircase = try path.measuring("all (thd_vs_level)") { () throws(AnalyzerFailure) in try levels.run() }
        }
        var noise = NoiseMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        path.watch(&noise, as: "all (noise)")
        let noiseResult = try path.measuring("all (noise)") { () throws(AnalyzerFailure) in try noise.run() }
        var imd = IntermodulationMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        path.watch(&imd, as: "all (imd)")
        let imdResult = try path.measuring("all (imd)") { () throws(AnalyzerFailure) in try imd.run() }
        var results: [(result: any LimitedResult & Encodable, text: String)] = [
            (responseResult, AnalyzeResponse.describe(responseResult)), (thdResult, AnalyzeTHD.describe(thdResult)),
            (noiseResult, AnalyzeNoise.describe(noiseResult)), (imdResult, AnalyzeIMD.describe(imdResult)),
        ]
        if let staircase { results.insert((staircase, AnalyzeTHD.describe(staircase)), at: 2) }
        // Crosstalk and the channels' match where there are two channels or more.
        if path.outputs.count >= 2 {
            let crosstalk = try AnalyzeCrosstalk.measure(on: choice.name, path: path)
            results.append((crosstalk, AnalyzeCrosstalk.describe(crosstalk)))
        }
        try path.tell(results)
    }
}
