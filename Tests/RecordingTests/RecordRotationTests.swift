import Foundation
import JackTestSupport
import Recording
import XCTest

/// `jas record --rotate`: a take split into files at exact boundaries, with
/// no frame lost or repeated between them, checked against a single-file
/// take of the same ports made at the same time (another process).
final class RecordRotationTests: JackTestCase {
    func testRotatedFilesJoinIntoTheSingleFileTakeSampleForSample() throws {
        // 44.1 kHz: a 2 s boundary falls inside a period (88200 = 344.5 × 256).
        let server = try startServer(sampleRate: 44100, period: 256)
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 11)
        defer { sender.session.close() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A file left from before has the second file's name: it gets a counter, never replaced.
        let leftover = "\(folder)/rot-002.wav"
        try Data("not ours".utf8).write(to: URL(fileURLWithPath: leftover))
        let single = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "loopback:capture_*",
                                                             "--output", "\(folder)/one.wav", "--for", "10"])
        XCTAssertTrue(waitUntil(timeout: 10) { single.event("started") != nil }, single.stderr)
        let rotating = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "loopback:capture_*",
                                                               "--output", "\(folder)/rot.wav", "--for", "7",
                                                               "--rotate", "2s"])
        let rotated = try XCTUnwrap(rotating.finish(timeout: 30), rotating.stderr)
        let whole = try XCTUnwrap(single.finish(timeout: 30), single.stderr)
        XCTAssertEqual(rotating.process.terminationStatus, 0, rotating.stderr)

        let paths = try XCTUnwrap(rotated["paths"] as? [String])
        XCTAssertEqual(paths.map { ($0 as NSString).lastPathComponent },
                       ["rot-001.wav", "rot-002-2.wav", "rot-003.wav", "rot-004.wav"])
        XCTAssertEqual(try String(contentsOfFile: leftover, encoding: .utf8), "not ours")
        XCTAssertEqual(rotated["frames_written"] as? Int, 7 * 44100)
        let readers = try paths.map { try SoundFileReader(path: $0) }
        XCTAssertEqual(readers.map(\.frames), [88200, 88200, 88200, 44100])
        // Each file's bext time reference is its own first frame.
        let references = try readers.map { try XCTUnwrap($0.broadcastTimeReference) }
        for (index, reference) in references.enumerated() {
            XCTAssertEqual(Int64(reference) - Int64(references[0]), Int64(index * 88200), "file \(index + 1)")
        }
        let log = logEvents("\(folder)/rot-001.log")
        XCTAssertEqual(log.filter { $0["event"] as? String == "rotated" }.compactMap { $0["at_frame"] as? Int },
                       [88200, 176400, 264600])
        XCTAssertEqual(log.filter { $0["event"] as? String == "part_skipped" }.count, 1, "\(log)")

        // Joined, the four files are the single take from the rotating take's first frame on.
        var joined: [Float] = []
        for reader in readers { joined += try reader.readAll() }
        let one = try SoundFileReader(path: "\(folder)/one.wav").readAll()
        let offset = Int(Int32(bitPattern: try XCTUnwrap(rotated["first_frame_time"] as? UInt32 ?? (rotated["first_frame_time"] as? Int).map(UInt32.init))
                                        &- (try XCTUnwrap((whole["first_frame_time"] as? Int).map(UInt32.init)))))
        XCTAssertGreaterThanOrEqual(offset, 0)
        XCTAssertLessThanOrEqual((offset + 7 * 44100) * 2, one.count, "the single take covers the rotating one")
        guard offset >= 0, (offset + 7 * 44100) * 2 <= one.count else { return }
        let differing = (0..<joined.count).filter { joined[$0].bitPattern != one[offset * 2 + $0].bitPattern }
        XCTAssertEqual(differing.count, 0, "first differing sample: \(differing.first.map { "\($0 / 2)" } ?? "-")")
        XCTAssertGreaterThan(joined.map { abs($0) }.max() ?? 0, 0.01, "the signal was there")
    }
}
