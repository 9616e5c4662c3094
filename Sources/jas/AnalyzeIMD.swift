import ArgumentParser
import Foundation
import Measurement

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
        _ = try OptionCheck.dBFS(level)
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
        measurement.levelDBFS = try OptionCheck.dBFS(level)
        path.watch(&measurement, as: "imd")
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
