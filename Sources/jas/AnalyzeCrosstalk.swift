import ArgumentParser
import Foundation
import Measurement

/// `jas analyze crosstalk`: each channel driven alone, the others read.
struct AnalyzeCrosstalk: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crosstalk",
        abstract: "Crosstalk between channels (997 Hz and against frequency), and their gain and phase match.",
        discussion: """
            Drives each --out port alone, with 997 Hz at -1 dBFS and then a sweep, while every --in port is read \
            (give two pairs or more; default: the loopback's two). Crosstalk is each other input's level against \
            the driven channel's own input, in dB; a victim in digital silence has none (null). The match is the \
            spread of the channels' gains and phases at 997 Hz.
            """
    )

    @OptionGroup var path: AnalyzerPath

    @Option(help: "The sweep's length, e.g. 2s (default 2 s; 0.5 s to 10 min).")
    var length = "2s"

    func validate() throws {
        _ = try OptionCheck.duration(length, "--length", in: SweepMeasurement.lengthRange, example: "2s or 500ms")
        if path.outputPorts.count == 1 { throw ValidationError("crosstalk needs two channels or more: give --out and --in twice") }
        try path.requireLimits(for: ["crosstalk"])
    }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        let result = try Self.measure(on: choice.name, path: path,
                                      seconds: try OptionCheck.duration(length, "--length", in: SweepMeasurement.lengthRange, example: "2s or 500ms"))
        try path.tell([(result, Self.describe(result))])
    }

    /// The loopback's two pairs unless ports were given.
    static func measure(on server: String, path: AnalyzerPath, seconds: Double = 2) throws -> CrosstalkMeasurement.Result {
        let pairs = path.outputPorts.isEmpty
            ? (["loopback:playback_1", "loopback:playback_2"], ["loopback:capture_1", "loopback:capture_2"])
            : (path.outputPorts, path.inputPorts)
        var measurement = CrosstalkMeasurement(serverName: server, outputPorts: pairs.0, inputPorts: pairs.1)
        measurement.sweepSeconds = seconds
        path.watch(&measurement, as: "crosstalk")
        return try path.measuring("crosstalk") { () throws(AnalyzerFailure) in try measurement.run() }
    }

    static func describe(_ result: CrosstalkMeasurement.Result) -> String {
        func dB(_ value: Double) -> String {
            value.isFinite ? String(format: "%.2f dB", (value * 100).rounded() / 100 + 0.0) : "none (digital silence)"
        }
        var lines = [String(format: "crosstalk on '%@' (%d Hz, period %d frames): each output driven alone", result.serverName,
                            result.sampleRate, result.periodFrames)]
        for channel in result.channels {
            lines.append(String(format: "  %@ → %@: gain %+.3f dB, phase %+.2f° at 997 Hz", Output.safe(channel.outputPort),
                                Output.safe(channel.inputPort), channel.gainDB + 0.0, channel.phaseDegrees + 0.0))
        }
        lines.append(String(format: "  match: gain within %.3f dB, phase within %.2f°", result.gainMatchDB, result.phaseMatchDegrees))
        for leak in result.leaks {
            let worst = leak.response.filter { $0.crosstalkDB.isFinite }.max { $0.crosstalkDB < $1.crosstalkDB }
            lines.append("  \(Output.safe(result.channels[leak.driven].outputPort)) into \(Output.safe(result.channels[leak.victim].inputPort)): "
                         + "\(dB(leak.crosstalkDB)) at 997 Hz"
                         + (worst.map { String(format: ", at most %.2f dB (%.0f Hz)", $0.crosstalkDB, $0.frequency) } ?? ""))
        }
        lines.append("  " + CrosstalkMeasurement.Result.definition)
        return lines.joined(separator: "\n")
    }
}
