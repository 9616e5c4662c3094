import ArgumentParser
import Foundation
import Measurement

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

    @Option(help: "Write the response to this FRD file (frequency in hertz, magnitude in decibels, phase in degrees; 1/24 octave).")
    var frd: String?

    @Option(help: "Write the response to this CSV file (a header, then frequency_hz,magnitude_db,phase_deg).")
    var csv: String?

    func validate() throws {
        _ = try OptionCheck.hertz(start, option: "--start")
        _ = try OptionCheck.hertz(end, option: "--end")
        _ = try OptionCheck.duration(length, "--length", in: 0.5...600, example: "5s or 500ms")
        _ = try OptionCheck.dBFS(level)
        try path.requireLimits(for: ["response"])
    }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        var measurement = SweepMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        measurement.startFrequency = try OptionCheck.hertz(start, option: "--start")
        measurement.endFrequency = try OptionCheck.hertz(end, option: "--end")
        measurement.seconds = try OptionCheck.duration(length, "--length", in: 0.5...600, example: "5s or 500ms")
        measurement.levelDBFS = try OptionCheck.dBFS(level)
        path.watch(&measurement, as: "response")
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
