import ArgumentParser
import Foundation
import Measurement
import Recording

/// `jas analyze response`: magnitude and phase from a sweep.
struct AnalyzeResponse: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "response",
        abstract: "Frequency response (magnitude and phase) from a synchronized exponential sweep.",
        discussion: """
            Plays a sweep (Novak's synchronized exponential sweep) on every --out port and reads the matching \
            --in port; the response is the recording's spectrum over the sweep's, in the sweep's band, with the \
            path's whole-frame delay (the impulse response's peak) removed from the phase. A silent pass follows: \
            the noise floor against frequency, dBFS in 1/3-octave bands. Printed at 1/3 octave; \
            JSON, --frd and --csv at 1/24 octave, each point the nearest FFT bin's (not smoothed). --frd writes \
            what REW and Open Sound Meter import (frequency, dB, degrees); --ir the impulse response as a WAV \
            file (32-bit float, full scale 1; its peak 10 ms in, what rings before it kept; the path's delay \
            before that removed, as in the phase). With several \
            channels each file gets the channel's number before its extension.
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

    @Option(help: "Smooth the magnitude shown (text, --report, and a column of --csv) over a fraction of an octave, e.g. 1/6 (1/3 to 1/48); JSON and --frd stay raw.")
    var smoothing: String?

    @Option(help: "Write the impulse response to this WAV file (32-bit float, the peak 10 ms in).")
    var ir: String?

    func validate() throws {
        _ = try OptionCheck.hertz(start, option: "--start")
        _ = try OptionCheck.hertz(end, option: "--end")
        _ = try OptionCheck.duration(length, "--length", in: SweepMeasurement.lengthRange, example: "5s or 500ms")
        _ = try OptionCheck.dBFS(level)
        _ = try OptionCheck.octaveFraction(smoothing)
        for (option, file) in [("--frd", frd), ("--csv", csv), ("--ir", ir)] {
            try OptionCheck.writableFolder(of: file, option)
        }
        try path.requireLimits(for: ["response"])
    }

    func run() throws {
        let choice = try path.serverChoice()
        defer { withExtendedLifetime(choice) {} }
        var measurement = SweepMeasurement(serverName: choice.name, outputPorts: path.outputs, inputPorts: path.inputs)
        measurement.startFrequency = try OptionCheck.hertz(start, option: "--start")
        measurement.endFrequency = try OptionCheck.hertz(end, option: "--end")
        measurement.seconds = try OptionCheck.duration(length, "--length", in: SweepMeasurement.lengthRange, example: "5s or 500ms")
        measurement.levelDBFS = try OptionCheck.dBFS(level)
        path.watch(&measurement, as: "response")
        let result = try path.measuring("response") { () throws(AnalyzerFailure) in try measurement.run() }
        let fraction = try OptionCheck.octaveFraction(smoothing)
        let written = write(result, smoothing: fraction)
        try path.tell([(result, Self.describe(result, smoothing: fraction))], smoothing: fraction)
        if !written { throw ExitCode(2) }
    }

    /// The --frd, --csv and --ir files, one per channel.
    /// Says on stderr why a file could not be written; false if one could not.
    private func write(_ result: SweepMeasurement.Result, smoothing: Int?) -> Bool {
        var written = true
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
                written = Self.save(lines, to: named(frd)) && written
            }
            if let csv {
                var lines = ["frequency_hz,magnitude_db,phase_deg"]
                    + points.map { String(format: "%.4f,%.4f,%.3f", $0.frequency, $0.magnitudeDB, $0.phaseDegrees) }
                if let smoothing {
                    let smoothed = channel.analysis.smoothed(at: frequencies, octaveFraction: smoothing)
                    lines = ["\(lines[0]),smoothed_1_\(smoothing)_octave_db"]
                        + zip(lines.dropFirst(), smoothed).map { $0 + String(format: ",%.4f", $1.magnitudeDB) }
                }
                written = Self.save(lines, to: named(csv)) && written
            }
            if let ir { written = Self.save(channel.analysis.impulseResponse, sampleRate: result.sampleRate, to: named(ir)) && written }
        }
        return written
    }

    private static func save(_ lines: [String], to path: String) -> Bool {
        do {
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            return true
        } catch {
            return cannotWrite(path, error.localizedDescription)
        }
    }

    /// An impulse response as a mono 32-bit float WAV file.
    private static func save(_ impulse: [Float], sampleRate: Int, to path: String) -> Bool {
        do throws(RecordingError) {
            let file = try SoundFileWriter(path: path, channels: 1, sampleRate: sampleRate, format: RecordingFormat())
            try impulse.withUnsafeBufferPointer { samples throws(RecordingError) in
                try file.write(samples.baseAddress!, frames: samples.count)
            }
            file.close()
            return true
        } catch {
            return cannotWrite(path, error.description)
        }
    }

    private static func cannotWrite(_ path: String, _ reason: String) -> Bool {
        Output.diagnostic("jas analyze response: cannot write '\(path)': \(reason); the figures are printed")
        return false
    }

    static func describe(_ result: SweepMeasurement.Result, smoothing: Int? = nil) -> String {
        let sweep = result.sweep
        var lines = [String(format: "response from a %.1f s sweep, %.0f Hz to %.0f Hz at %.2f dBFS, on '%@' (%d Hz, period %d frames)",
                            Double(sweep.sweepFrames) / Double(result.sampleRate), sweep.startFrequency, sweep.endFrequency,
                            sweep.levelDBFS, result.serverName, result.sampleRate, result.periodFrames)]
        let frequencies = SweepAnalysis.logFrequencies(from: sweep.startFrequency, to: sweep.endFrequency, perOctave: 3)
        for channel in result.channels {
            lines.append("  \(Output.safe(channel.outputPort)) → \(Output.safe(channel.inputPort)) "
                         + "(delay \(channel.analysis.delayFrames) frames removed):")
            let shown = smoothing.map { channel.analysis.smoothed(at: frequencies, octaveFraction: $0) }
                ?? channel.analysis.points(at: frequencies)
            for (index, (frequency, point)) in zip(frequencies, shown).enumerated() {
                let thd = channel.analysis.distortion(at: frequency).map { distortion in
                    distortion.thdDB.map { String(format: "  THD %7.2f dB", ($0 * 100).rounded() / 100 + 0.0) }
                        ?? String(format: "  THD < %.0f dB (the method's floor %.0f dB + 20)", distortion.floorDB + SweepAnalysis.floorMargin,
                                  distortion.floorDB)
                } ?? ""
                let noise = channel.noiseFloor.bands.indices.contains(index) ? channel.noiseFloor.bands[index].dBFS : .nan
                let floor = noise.isFinite ? String(format: "  noise %7.1f dBFS", noise) : noise.isNaN ? "" : "  noise  silence     "
                let line = String(format: "    %9.1f Hz  %+8.3f dB  %+8.2f°", point.frequency, (point.magnitudeDB * 1000).rounded() / 1000 + 0.0,
                                  (point.phaseDegrees * 100).rounded() / 100 + 0.0) + floor + thd
                lines.append(String(line.reversed().drop { $0 == " " }.reversed()))
            }
        }
        lines.append("  noise: the silent pass's noise floor in the point's 1/3-octave band, dBFS")
        if let smoothing { lines.append("  magnitude smoothed over 1/\(smoothing) octave, for display (JSON and --frd: raw)") }
        lines.append("  " + SweepMeasurement.Result.definition)
        return lines.joined(separator: "\n")
    }
}
