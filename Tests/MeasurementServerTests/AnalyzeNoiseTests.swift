import Foundation
import JackTestSupport
import XCTest

/// `jas analyze noise` as a user runs it, on real jackd servers: two
/// quantizers (16 and 24 bits, TPDF dither; JACK clients in a process of
/// their own) whose noise is known in closed form, the bit-exact loopback,
/// and an input nothing feeds.
final class AnalyzeNoiseTests: JackTestCase {
    private func measure(_ arguments: [String], file: StaticString = #filePath,
                         line: UInt = #line) throws -> (result: [String: Any], channels: [[String: Any]]) {
        let run = try run([jas, "analyze", "noise", "--json"] + arguments, timeout: 120, file: file, line: line)
        XCTAssertEqual(run.status, 0, run.output, file: file, line: line)
        let result = try XCTUnwrap(jsonLines(run.output).first { $0["event"] as? String == "noise" }, run.output,
                                   file: file, line: line)
        return (result, try XCTUnwrap(result["channels"] as? [[String: Any]], file: file, line: line))
    }

    /// Idle noise within 0.5 dB of theory (a quarter step squared, white, the
    /// band's share); A and C less unweighted as scipy computes them for
    /// white noise from IEC 61672-1's poles; the SNR the unweighted noise
    /// against full scale; AES17's dynamic range the weighted noise under
    /// full scale (the −60 dBFS tone's residual is the same dither noise).
    func testTwoQuantizersNoiseAndDynamicRangeAreTheTheorys() throws {
        let server = try startServer(period: 256, realtime: true)
        let sixteen = try TestProgram.quantizer.start([server.name, "q16", "16"])
        defer { sixteen.terminate(); sixteen.waitUntilExit() }
        let twentyFour = try TestProgram.quantizer.start([server.name, "q24", "24"])
        defer { twentyFour.terminate(); twentyFour.waitUntilExit() }
        let (result, channels) = try measure(["--server", server.name, "--out", "q16:in", "--in", "q16:out",
                                              "--out", "q24:in", "--in", "q24:out"])
        XCTAssertEqual(result["level_convention"] as? String, "dBFS per AES17: a full-scale sine is 0 dBFS")
        XCTAssertNotNil((result["weightings"] as? [String: String])?["ccir_rms"])
        let white = try scipyFigures("noise-scipy.py", ["--white", "48000", "48000"])
        XCTAssertEqual(channels.count, 2)
        for (channel, bits) in zip(channels, [16, 24]) {
            let step = pow(2, -Double(bits - 1))
            let theory = 10 * log10(step * step / 4 / 0.5 * 19981 / 24000)
            let noise = try XCTUnwrap(channel["noise_dbfs"] as? [String: Double], "\(channel)")
            let unweighted = try XCTUnwrap(noise["unweighted"])
            XCTAssertEqual(unweighted, theory, accuracy: 0.5, "\(bits) bits")
            // The idle channel's 1/3-octave spectrum: the same white noise, band by band.
            let spectrum = try WhiteNoiseBands(try XCTUnwrap(channel["noise_spectrum"] as? [[String: Any]]), variance: step * step / 4)
            XCTAssertEqual(spectrum.bands.count, 31, "1/3 octave from 20 Hz to the band that holds 20 kHz")
            for band in spectrum.bands where band.low >= 2000 { XCTAssertEqual(band.level, band.expected, accuracy: 1, "\(band)") }
            XCTAssertEqual(spectrum.total.measured, spectrum.total.expected, accuracy: 0.15, "\(bits) bits")
            XCTAssertEqual(try XCTUnwrap(noise["a"]) - unweighted, try XCTUnwrap(white["a"]), accuracy: 0.2, "\(bits) bits")
            XCTAssertEqual(try XCTUnwrap(noise["c"]) - unweighted, try XCTUnwrap(white["c"]), accuracy: 0.2, "\(bits) bits")
            XCTAssertLessThan(try XCTUnwrap(noise["ccir_rms"]), unweighted + 10, "\(bits) bits")
            // The 468 curve's RMS is CCIR-RMS + 5.63 dB; its quasi-peak detector reads Gaussian noise's peaks higher than
            // that (the meter's needle rides the peaks), and not by more than noise's crest factor.
            let curveRMS = try XCTUnwrap(noise["ccir_rms"]) + 5.63
            XCTAssertGreaterThan(try XCTUnwrap(noise["itu468_qp"]), curveRMS + 1, "\(bits) bits: \(noise)")
            XCTAssertLessThan(try XCTUnwrap(noise["itu468_qp"]), curveRMS + 12, "\(bits) bits: \(noise)")
            XCTAssertEqual(try XCTUnwrap(channel["snr_db"] as? Double), -unweighted, accuracy: 0.011)
            XCTAssertEqual(try XCTUnwrap(channel["tone_dbfs"] as? Double), -60, accuracy: 0.05, "\(bits) bits")
            let range = try XCTUnwrap(channel["dynamic_range_db"] as? [String: Double])
            XCTAssertEqual(try XCTUnwrap(range["a"]), -(theory + white["a"]!), accuracy: 0.5, "\(bits) bits")
            print("AnalyzeNoiseTests: \(bits) bits: noise \(noise) dBFS (theory unweighted \(theory)), SNR \(channel["snr_db"]!) dB, "
                  + "dynamic range \(range) dB")
        }
    }

    /// jackd's -L loopback, on a private server: its idle channel is digital
    /// silence (null, never a made-up floor), and its dynamic range is the
    /// float path's, reported as a number.
    func testTheBitExactLoopbacksIdleChannelIsDigitalSilence() throws {
        let (_, channels) = try measure([])
        let channel = try XCTUnwrap(channels.first)
        let noise = try XCTUnwrap(channel["noise_dbfs"] as? [String: Any])
        XCTAssertEqual(Set(noise.keys), ["unweighted", "a", "c", "ccir_rms", "itu468_qp"])
        XCTAssertTrue(noise.values.allSatisfy { $0 is NSNull }, "\(noise)")
        XCTAssertTrue(channel["snr_db"] is NSNull, "\(channel)")
        let range = try XCTUnwrap(channel["dynamic_range_db"] as? [String: Any])
        XCTAssertGreaterThan(try XCTUnwrap(range["a"] as? Double, "\(range)"), 150)
        let text = try run([jas, "analyze", "noise"], timeout: 120)
        XCTAssertEqual(text.status, 0, text.output)
        XCTAssertTrue(text.output.contains("idle noise: unweighted digital silence"), text.output)
    }

    /// An input nothing feeds: the −60 dBFS tone does not come back, so no
    /// figure (idle noise alone could not tell it from a perfect path),
    /// the port named, exit status 2.
    func testAnInputNothingFeedsIsNoSignal() throws {
        let server = try startServer(period: 256)
        let unfed = try run([jas, "analyze", "noise", "--server", server.name, "--out", "loopback:playback_1",
                             "--in", "loopback:capture_2"])
        XCTAssertEqual(unfed.status, 2, unfed.output)
        XCTAssertTrue(unfed.output.contains("'loopback:capture_2'"), unfed.output)
        XCTAssertFalse(unfed.output.contains("dynamic range"), unfed.output)
    }
}
