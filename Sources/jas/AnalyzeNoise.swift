import ArgumentParser
import Foundation
import Measurement

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
        path.watch(&measurement, as: "noise")
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
                .joined(separator: ", ") + ", ITU-R 468 quasi-peak \(level(channel.quasiPeak468DBFS))")
            lines.append("    SNR against full scale \(ratio(channel.signalToNoiseDB)); dynamic range (997 Hz at -60 dBFS): "
                         + NoiseMeasurement.dynamicRangeWeightings.map { "\(ratio(channel.dynamicRangeDB($0))) \(Self.label($0))" }
                .joined(separator: ", "))
        }
        lines.append("  weightings: " + (Weighting.allCases.map { $0.definition } + [NoiseMeasurement.quasiPeak468Definition])
            .joined(separator: "; "))
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
