import Foundation
import JackTestSupport
@testable import Metering
import Recording
import XCTest

/// The meters on the EBU test signals, from file, against what EBU Tech 3341
/// and 3342 say they must read, and against a second implementation.
final class ConformanceTests: JackTestCase {
    func testTech3341And3342SignalsReadWithinTheirTolerances() throws {
        let signals = try EBUSignals.all()
        XCTAssertEqual(signals.count, 15)
        for signal in signals {
            let summary = try FileMeter.meter(path: signal.path, layout: signal.layout.flatMap(ChannelLayout.init))
            if let integrated = signal.integrated {
                let measured = try XCTUnwrap(summary.integratedLUFS, signal.name)
                XCTAssertEqual(measured, integrated, accuracy: 0.1, "\(signal.name) integrated")
            }
            if let momentary = signal.momentary {
                XCTAssertEqual(try XCTUnwrap(summary.maxMomentaryLUFS), momentary, accuracy: 0.1, "\(signal.name) M")
            }
            if let shortTerm = signal.shortTerm {
                XCTAssertEqual(try XCTUnwrap(summary.maxShortTermLUFS), shortTerm, accuracy: 0.1, "\(signal.name) S")
            }
            if let lra = signal.lra {
                XCTAssertEqual(try XCTUnwrap(summary.lraLU, signal.name), lra, accuracy: 1, "\(signal.name) LRA")
            }
            if let truePeak = signal.truePeak {
                // Tech 3341's true-peak tolerance: +0.2 / −0.4 dB.
                XCTAssertLessThanOrEqual(summary.truePeakDBTP, truePeak + 0.2, signal.name)
                XCTAssertGreaterThanOrEqual(summary.truePeakDBTP, truePeak - 0.4, signal.name)
                // The sample peak of these tones lies below it (between 0 and 3 dB).
                XCTAssertLessThanOrEqual(summary.samplePeakDBFS, summary.truePeakDBTP + 0.01, signal.name)
            }
            print(String(format: "%@: I %@ LUFS, LRA %@ LU, TP %.2f dBTP, SP %.2f dBFS", signal.name,
                         summary.integratedLUFS.map { String(format: "%.2f", $0) } ?? "-",
                         summary.lraLU.map { String(format: "%.1f", $0) } ?? "-", summary.truePeakDBTP,
                         summary.samplePeakDBFS))
        }
    }

    func testPyloudnormAgreesWithinATenthOfALoudnessUnit() throws {
        let stereo = try EBUSignals.all().filter { $0.channels == 2 }
        let script = """
            import sys, pyloudnorm, scipy.io.wavfile
            for path in sys.argv[1:]:
                rate, data = scipy.io.wavfile.read(path)
                print(pyloudnorm.Meter(rate).integrated_loudness(data.astype("float64")))
            """
        let result = try run(["python3", "-c", script] + stereo.map(\.path))
        XCTAssertEqual(result.status, 0, result.output)
        let theirs = result.output.split(separator: "\n").compactMap { Double($0) }
        XCTAssertEqual(theirs.count, stereo.count, result.output)
        for (signal, other) in zip(stereo, theirs) {
            let ours = try XCTUnwrap(try FileMeter.meter(path: signal.path).integratedLUFS)
            XCTAssertEqual(ours, other, accuracy: 0.1, "\(signal.name): ours \(ours), pyloudnorm \(other)")
        }
    }

    func testCommandLineSummaryOfAFile() throws {
        let signal = try XCTUnwrap(try EBUSignals.all().first { $0.name == "3342-case1" })
        let result = try run([jas, "meter", "--file", signal.path, "--json", "--interval", "1s"])
        XCTAssertEqual(result.status, 0, result.output)
        let lines = result.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(lines.filter { $0["event"] as? String == "reading" }.count, 40, "one reading per second")
        let summary = try XCTUnwrap(lines.last)
        XCTAssertEqual(summary["event"] as? String, "summary")
        for key in ["integrated_lufs", "lra_lu", "true_peak_dbtp", "sample_peak_dbfs", "channels"] {
            XCTAssertNotNil(summary[key], "missing \(key)")
        }
        XCTAssertEqual(summary["lra_lu"] as? Double ?? 0, 10, accuracy: 1)
        XCTAssertEqual(summary["sample_peak_dbfs"] as? Double ?? 0, -20, accuracy: 0.01)
        XCTAssertEqual((summary["channels"] as? [[String: Any]])?.count, 2)
        let bad = try run([jas, "meter", "--file", "/nonexistent.wav"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.output.contains("/nonexistent.wav"), bad.output)
        XCTAssertThrowsError(try FileMeter.meter(path: "/nonexistent.wav")) { error in
            guard case let .file(fileError)? = error as? MeteringError else { return XCTFail("not a file error: \(error)") }
            XCTAssertEqual(fileError.path, "/nonexistent.wav")
        }
        let badLayout = try run([jas, "meter", "--file", signal.path, "--layout", "5.1"])
        XCTAssertNotEqual(badLayout.status, 0)
        XCTAssertTrue(badLayout.output.contains("needs 6 channels"), badLayout.output)
    }

    func testDamagedFilesAreMeteredWithAWarningAndUnreadableOnesAreNamedWithWhatToDo() throws {
        let folder = NSTemporaryDirectory() + "jas-meter-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A 2 s, -20 dBFS sine whose second half-second holds one NaN and one +inf.
        let damaged = "\(folder)/nan.wav"
        let writer = try SoundFileWriter(path: damaged, channels: 1, sampleRate: 48000, format: RecordingFormat())
        var samples = (0..<96000).map { Float(0.1 * sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        samples[30000] = .nan
        samples[30001] = .infinity
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count) }
        writer.close()
        let nan = try run([jas, "meter", "--file", damaged, "--json", "--interval", "1s"])
        XCTAssertEqual(nan.status, 0, nan.output)
        let objects = nan.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let warning = try XCTUnwrap(objects.first { $0["event"] as? String == "warning" }, nan.output)
        XCTAssertTrue((warning["message"] as? String ?? "").contains("2 samples are NaN or infinite (the first at frame 30000)"),
                      "\(warning)")
        let summary = try XCTUnwrap(objects.last)
        XCTAssertEqual(summary["sample_peak_dbfs"] as? Double ?? 0, -20, accuracy: 0.01, "the rest is metered: \(summary)")
        XCTAssertNotNil(summary["integrated_lufs"] as? Double, "\(summary)")

        // The same file cut short, as a copy or a recording that did not finish.
        let short = "\(folder)/short.wav"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: damaged))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: short))
        let truncated = try run([jas, "meter", "--file", short])
        XCTAssertEqual(truncated.status, 0, truncated.output)
        XCTAssertTrue(truncated.output.contains("'\(short)' is truncated: its header promises"), truncated.output)

        // Files that are no audio: each named, with what to do, and no library code.
        try Data().write(to: URL(fileURLWithPath: "\(folder)/empty.wav"))
        try Data("not audio at all".utf8).write(to: URL(fileURLWithPath: "\(folder)/text.wav"))
        for (path, words) in [("\(folder)/empty.wav", "is empty"), ("\(folder)/text.wav", "convert the file first"),
                              (folder, "is a folder"), ("\(folder)/missing.wav", "check the path")] {
            let result = try run([jas, "meter", "--file", path])
            XCTAssertEqual(result.status, 2, result.output)
            XCTAssertTrue(result.output.contains("'\(path)'") && result.output.contains(words), result.output)
        }
    }
}
