import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// `jas extract`: a clip of a logged take by wall-clock time, across file
/// boundaries, equal sample for sample to the same stretch of a single-file
/// take of the same ports made in the same cycles (another process); a time
/// the take has no audio for is refused, naming what it has.
final class RecordExtractTests: JackTestCase {
    func testAClipAcrossThreeFilesEqualsTheSameStretchOfASingleFileTake() throws {
        // Sync mode: both recorders get every cycle (see RecordRotationTests).
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 7)
        defer { sender.session.close() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: "\(folder)/log", withIntermediateDirectories: true)
        let single = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "signal-sender:out_*",
                                                             "--output", "\(folder)/one.wav", "--for", "10"])
        XCTAssertTrue(waitUntil(timeout: 10) { single.event("started") != nil }, single.stderr)
        let logger = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "signal-sender:out_*",
                                                             "--output", "\(folder)/log/rot-%H%M%S.wav", "--utc",
                                                             "--rotate", "2s", "--for", "7"])
        let logged = try XCTUnwrap(logger.finish(timeout: 40), logger.stderr)
        XCTAssertNotNil(single.finish(timeout: 40), single.stderr)
        let manifestPath = try XCTUnwrap(logged["manifest_path"] as? String)
        XCTAssertEqual(manifestPath, "\(folder)/log/rot.manifest.jsonl")
        let files = TakeManifest.read(manifestPath).lines.filter { $0.event == .closed }
        XCTAssertGreaterThanOrEqual(files.count, 4, "\(files)")
        guard files.count >= 4 else { return }

        // The last half second of the second file, all of the third, the first half second of the fourth.
        let from = try XCTUnwrap(files[1].endUTC) - 0.5, to = min(files[3].startUTC + 0.5, try XCTUnwrap(files[3].endUTC))
        let clip = "\(folder)/clip.wav"
        let result = try run([jas, "extract", manifestPath, "--from", ManifestLine.iso(from),
                              "--to", ManifestLine.iso(to), "--output", clip, "--json"])
        XCTAssertEqual(result.status, 0, result.output)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], result.output)
        XCTAssertEqual((report["sources"] as? [[String: Any]])?.count, 3, "\(report)")
        let reader = try SoundFileReader(path: clip)
        // Its length is the time asked for, to the millisecond the take's times are measured to, less
        // what the dummy jackd lost in the files it comes from: it restarts its timing from a late cycle,
        // and the time it lost has no frames (docs/JACK-FINDINGS.md). Such a loss anywhere in a file moves
        // the file's evenly spread frames, so the clip may be short by up to the files' lost time, as their
        // spans say it (measured time less their frames' nominal time; seen beside a busy core: 62 frames
        // short, no xrun logged within the clip), and by an xrun's delay and a period for each logged in it.
        let xruns = logEvents(try XCTUnwrap(logged["log_path"] as? String)).filter {
            $0["event"] as? String == "xrun" && ((from - 1)...(to + 1)).contains($0["time"] as? Double ?? 0)
        }
        let lostInFiles = try files[1...3].reduce(0.0) { lost, file in
            lost + max(0, try XCTUnwrap(file.endUTC) - file.startUTC - Double(try XCTUnwrap(file.frames)) / 48000) * 48000
        }
        let lost = xruns.reduce(lostInFiles) { $0 + ($1["delay_us"] as? Double ?? 0) * 0.048 + 256 }
        XCTAssertEqual(Double(reader.frames), (to - from) * 48000 - lost / 2, accuracy: 48 + lost / 2,
                       "xruns: \(xruns), lost in the files: \(lostInFiles) frames")
        // Its TimeReference is its first frame's time of day. Its file's frames spread evenly over the
        // file's measured span, so time a dummy jackd lost in that file (it restarts its timing from a
        // late cycle: no frames for that time) moves it earlier by up to that time (seen in CI: 7.9 ms,
        // and 2.5 ms beside a busy core with no xrun logged in the file before the clip): allowed for, as
        // the file's span says it (its measured time less its frames' nominal time).
        let lostBefore = max(0, try XCTUnwrap(files[1].endUTC) - files[1].startUTC - Double(try XCTUnwrap(files[1].frames)) / 48000)
        let reference = Double(try XCTUnwrap(reader.broadcastTimeReference)) / 48000
        XCTAssertEqual(reference, from.truncatingRemainder(dividingBy: 86_400) - lostBefore / 2,
                       accuracy: 0.001 + lostBefore / 2, "the clip's first file lost \(lostBefore) s")

        // Found in the single take by its first samples, it equals it there,
        // every sample. A sender late on a loaded machine leaves a period on
        // its ports twice, in both takes alike: of the places whose first
        // samples match, the one the whole clip matches best.
        let samples = reader.readAll()
        let one = try SoundFileReader(path: "\(folder)/one.wav").readAll()
        let key = 32
        func differences(at candidate: Int) -> Int {
            (0..<min(samples.count, one.count - candidate * 2)).count { samples[$0].bitPattern != one[candidate * 2 + $0].bitPattern }
        }
        let matches = (0..<(one.count / 2 - key)).filter { candidate in
            (0..<key).allSatisfy { samples[$0 * 2].bitPattern == one[(candidate + $0) * 2].bitPattern }
        }
        XCTAssertLessThanOrEqual(matches.count, 4, "the clip's first frames are in the single take at \(matches)")
        let scored = matches.prefix(4).map { (at: $0, differing: differences(at: $0)) }
        let (at, differing) = try XCTUnwrap(scored.min { $0.differing < $1.differing }, "the clip's first frames are nowhere in the single take")
        // A difference would most likely be silence one take wrote for a gap: the message names them.
        let gaps = gapRanges(logEvents(try XCTUnwrap(logged["log_path"] as? String))) + gapRanges(logEvents("\(folder)/one.log"))
        XCTAssertLessThanOrEqual(samples.count, one.count - at * 2, "the single take ends before the clip")
        XCTAssertEqual(differing, 0, "\(differing) samples differ (gaps: \(gaps))")

        // A time the take has no audio for: refused, naming what it has.
        let before = Date(timeIntervalSince1970: files[0].startUTC - 3600)
        var seconds = time_t(before.timeIntervalSince1970)
        var fields = tm()
        localtime_r(&seconds, &fields)
        let typed = String(format: "%02d:%02d:%02d", fields.tm_hour, fields.tm_min, fields.tm_sec)
        let refused = try run([jas, "extract", manifestPath, "--from", typed, "--for", "5s", "--output", "\(folder)/no.wav"])
        XCTAssertEqual(refused.status, 2, refused.output)
        XCTAssertTrue(refused.output.contains("has no audio"), refused.output)
        XCTAssertTrue(refused.output.contains(String(files[0].start.prefix(19))), refused.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(folder)/no.wav"))
    }
}
