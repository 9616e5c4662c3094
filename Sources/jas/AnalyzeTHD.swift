import ArgumentParser
import Foundation
import Measurement

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
        _ = try OptionCheck.hertz(frequency)
        _ = try OptionCheck.dBFS(level)
        if harmonics < 2 { throw ValidationError("--harmonics must be 2 or more, got \(harmonics)") }
        try path.requireLimits(for: ["thd"])
    }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
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
}
