import Foundation
import JackTestSupport
import XCTest

/// `jas analyze response` as a user runs it: an IIR filter in its own
/// process (a 4th-order Butterworth high-pass at 80 Hz and a +6 dB peak at
/// 3 kHz, coefficients from scipy) against scipy's sosfreqz of the same
/// sections, and the bit-exact loopback.
final class AnalyzeResponseTests: JackTestCase {
    private func response(_ arguments: [String]) throws -> [String: Any] {
        let run = try run([jas, "analyze", "response", "--json"] + arguments, timeout: 120)
        XCTAssertEqual(run.status, 0, run.output)
        let result = try XCTUnwrap(jsonLines(run.output).first { $0["event"] as? String == "response" }, run.output)
        return try XCTUnwrap((result["channels"] as? [[String: Any]])?.first, "\(result)")
    }

    /// Magnitude within ±0.05 dB and phase within ±1° of sosfreqz from 20 Hz
    /// to 20 kHz; the --frd file holds the same points; the --ir file is a
    /// float WAV, its peak 10 ms in, whose spectrum scipy finds within 0.05 dB of
    /// sosfreqz's from 100 Hz to 15 kHz.
    func testAnIIRFiltersResponseIsScipysFreqz() throws {
        let server = try startServer(period: 256, realtime: true)
        let sections = String(decoding: try scipyReference("iir-scipy.py", ["sections"]), as: UTF8.self).split(separator: " ")
            .map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        XCTAssertEqual(sections.count, 15)
        let device = try TestProgram.iir.start([server.name, "iir"] + sections)
        defer { device.terminate(); device.waitUntilExit() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let channel = try response(["--server", server.name, "--out", "iir:in", "--in", "iir:out", "--length", "3s",
                                    "--frd", "\(folder)/iir.frd", "--ir", "\(folder)/iir.wav"])
        let points = try XCTUnwrap(channel["response"] as? [[String: Double]])
        XCTAssertGreaterThan(points.count, 230, "1/24 octave from 20 Hz to 20 kHz")
        let frequencies = points.compactMap { $0["frequency_hz"] }.map { String(format: "%.3f", $0) }
        let reference = try XCTUnwrap(try JSONSerialization.jsonObject(with: try scipyReference("iir-scipy.py", ["response"] + frequencies)) as? [String: [Double]])
        var worst = (magnitude: 0.0, phase: 0.0)
        for (point, key) in zip(points, frequencies) {
            let expected = try XCTUnwrap(reference[key], key)
            let magnitude = try XCTUnwrap(point["magnitude_db"]), phase = try XCTUnwrap(point["phase_deg"])
            var phaseError = (phase - expected[1]).truncatingRemainder(dividingBy: 360)
            if phaseError > 180 { phaseError -= 360 }
            if phaseError < -180 { phaseError += 360 }
            XCTAssertEqual(magnitude, expected[0], accuracy: 0.05, "\(key) Hz")
            XCTAssertEqual(phaseError, 0, accuracy: 1, "\(key) Hz: \(phase)° against \(expected[1])°")
            worst = (max(worst.magnitude, abs(magnitude - expected[0])), max(worst.phase, abs(phaseError)))
        }
        print("AnalyzeResponseTests: IIR against sosfreqz at \(points.count) points: worst \(worst.magnitude) dB, \(worst.phase)°, "
              + "delay \(channel["delay_frames"] ?? "?") frames")
        let frd = try String(contentsOfFile: "\(folder)/iir.frd", encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("*") }
        XCTAssertEqual(frd.count, points.count)
        let first = frd.first?.split(separator: " ").compactMap { Double($0) } ?? []
        XCTAssertEqual(first.count, 3, "\(frd.first ?? "")")
        XCTAssertEqual(first.first ?? 0, try XCTUnwrap(points.first?["frequency_hz"]), accuracy: 0.001)
        let impulse = try XCTUnwrap(try JSONSerialization.jsonObject(with: try scipyReference("iir-scipy.py", ["ir", "\(folder)/iir.wav"]))
                                    as? [String: Any])
        XCTAssertEqual(impulse["sample_rate"] as? Int, 48000)
        XCTAssertEqual(impulse["dtype"] as? String, "float32")
        XCTAssertEqual(impulse["peak_index"] as? Int, 480, "the impulse response's peak 10 ms in")
        XCTAssertGreaterThan(try XCTUnwrap(impulse["frames"] as? Int), 4800)
        XCTAssertLessThan(try XCTUnwrap(impulse["worst_db"] as? Double), 0.05, "\(impulse)")
        print("AnalyzeResponseTests: the --ir file against sosfreqz: \(impulse)")
    }

    /// The -L loopback (private server): flat within ±0.001 dB, phase 0
    /// within 0.01° once its delay (one period) is removed, and a limits
    /// file on the response's deviation passes; smoothed for display, it
    /// says so and stays flat, the CSV's raw column beside the smoothed one.
    func testTheBitExactLoopbackIsFlat() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let channel = try response(["--length", "1s"])
        XCTAssertEqual(channel["delay_frames"] as? Int, 256)
        let points = try XCTUnwrap(channel["response"] as? [[String: Double]])
        for point in points {
            XCTAssertEqual(try XCTUnwrap(point["magnitude_db"]), 0, accuracy: 0.001, "\(point)")
            XCTAssertEqual(try XCTUnwrap(point["phase_deg"]), 0, accuracy: 0.01, "\(point)")
        }
        let limits = "\(folder)/flat.yaml"
        try "response:\n  deviation_db: {max: 0.001}\n  gain_997_db: {min: -0.001, max: 0.001}\n"
            .write(toFile: limits, atomically: true, encoding: .utf8)
        let verdict = try run([jas, "analyze", "response", "--length", "1s", "--limits", limits, "--smoothing", "1/6",
                               "--csv", "\(folder)/flat.csv"], timeout: 120)
        XCTAssertEqual(verdict.status, 0, verdict.output)
        XCTAssertTrue(verdict.output.contains("PASS: all 2 figures within their limits"), verdict.output)
        XCTAssertTrue(verdict.output.contains("magnitude smoothed over 1/6 octave"), verdict.output)
        // The CSV keeps the raw column and adds the smoothed one: flat too.
        let csv = try String(contentsOfFile: "\(folder)/flat.csv", encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(csv.first, "frequency_hz,magnitude_db,phase_deg,smoothed_1_6_octave_db")
        for row in csv.dropFirst() {
            let smoothed = try XCTUnwrap(row.split(separator: ",").last.flatMap { Double($0) }, String(row))
            XCTAssertEqual(smoothed, 0, accuracy: 0.001, String(row))
        }
        XCTAssertGreaterThan(csv.count, 230)
    }

    /// The silent pass of a 16-bit quantizer with TPDF dither (its own
    /// process): white noise of a quarter step squared, so each 1/3-octave
    /// band holds its bins' share. Every band from 2 kHz within 1 dB of the
    /// closed form (a band of 460 bins or more: 0.2 dB standard deviation),
    /// their sum within 0.15 dB; the -L loopback's floor is digital silence.
    func testTheNoiseFloorAgainstFrequencyIsAQuantizersClosedForm() throws {
        let server = try startServer(period: 256, realtime: true)
        let device = try TestProgram.quantizer.start([server.name, "q16", "16"])
        defer { device.terminate(); device.waitUntilExit() }
        let channel = try response(["--server", server.name, "--out", "q16:in", "--in", "q16:out", "--length", "1s"])
        let bands = try XCTUnwrap(channel["noise_floor"] as? [[String: Any]])
        XCTAssertEqual(bands.count, 30, "1/3 octave from the sweep's 20 Hz to 20 kHz")
        let step = pow(2, -15.0)
        let white = try WhiteNoiseBands(bands, variance: step * step / 4)
        for band in white.bands where band.low >= 2000 { XCTAssertEqual(band.level, band.expected, accuracy: 1, "\(band)") }
        XCTAssertEqual(white.total.measured, white.total.expected, accuracy: 0.15)
        print("AnalyzeResponseTests: the quantizer's noise floor in 20 Hz-20 kHz \(white.total.measured) dBFS, "
              + "closed form \(white.total.expected)")
        let loopback = try response(["--server", server.name, "--length", "1s"])
        let silence = try XCTUnwrap(loopback["noise_floor"] as? [[String: Any]])
        XCTAssertEqual(silence.count, 30)
        XCTAssertTrue(silence.allSatisfy { $0["level_dbfs"] is NSNull }, "digital silence, never a made-up floor: \(silence)")
    }

    /// A memoryless polynomial in its own process: the sweep's 2nd and 3rd
    /// harmonics, separated by their advance, within 0.2 dB of the closed
    /// forms at every 1/3-octave point where they are told.
    func testAPolynomialsSweptHarmonicsAreTheClosedForms() throws {
        let server = try startServer(period: 256, realtime: true)
        let (a2, a3) = (0.02, 0.005)
        let device = try TestProgram.polynomial.start([server.name, "dut", String(a2), String(a3)])
        defer { device.terminate(); device.waitUntilExit() }
        let channel = try response(["--server", server.name, "--out", "dut:in", "--in", "dut:out", "--length", "2s"])
        let amplitude = pow(10, -6.0 / 20)
        let fundamental = amplitude + 0.75 * a3 * pow(amplitude, 3)
        let second = 20 * log10(a2 * amplitude * amplitude / 2 / fundamental)
        let third = 20 * log10(a3 * pow(amplitude, 3) / 4 / fundamental)
        let distortion = try XCTUnwrap(channel["distortion"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(distortion.count, 20, "1/3 octave from 100 Hz to 10 kHz")
        XCTAssertTrue(distortion.allSatisfy { $0["floor_db"] is Double }, "\(distortion)")
        for point in distortion {
            let harmonics = try XCTUnwrap(point["harmonics"] as? [[String: Double]])
            func level(_ order: Int) -> Double? { harmonics.first { $0["order"] == Double(order) }?["level_db"] }
            let frequency = try XCTUnwrap(point["frequency_hz"] as? Double)
            // Above 6 kHz the polynomial's 3rd harmonics alias (above 24 kHz) into the 2nd's windows (SweepAnalysis).
            guard frequency <= 6000 else { continue }
            XCTAssertEqual(try XCTUnwrap(level(2), "\(point)"), second, accuracy: 0.2, "H2 at \(frequency) Hz")
            if frequency * 3 <= 20_000 {
                XCTAssertEqual(try XCTUnwrap(level(3), "\(point)"), third, accuracy: 0.2, "H3 at \(frequency) Hz")
            }
        }
    }
}
