import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// `jas record --rotate`: a take split into files at exact boundaries, with
/// no frame lost or repeated between them, checked against a single-file
/// take of the same ports made at the same time (another process).
final class RecordRotationTests: JackTestCase {
    func testRotatedFilesJoinIntoTheSingleFileTakeSampleForSample() throws {
        // 44.1 kHz: a 2 s boundary falls inside a period (88200 = 344.5 × 256).
        // Sync mode (-S): jackd waits for a late client instead of letting it
        // read a port mid-refresh, so two recorders of one port agree (seen:
        // without it, on a loaded machine, they parted after an xrun).
        let server = try startServer(sampleRate: 44100, period: 256, serverArguments: ["-S"])
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
                                                               "--rotate", "2s", "--rotate-from", "start"])
        let rotated = try XCTUnwrap(rotating.finish(timeout: 30), rotating.stderr)
        XCTAssertNotNil(single.finish(timeout: 30), single.stderr)
        XCTAssertEqual(rotating.process.terminationStatus, 0, rotating.stderr)

        let paths = try XCTUnwrap(rotated["paths"] as? [String])
        XCTAssertEqual(paths.map { ($0 as NSString).lastPathComponent },
                       ["rot-001.wav", "rot-002-2.wav", "rot-003.wav", "rot-004.wav"])
        XCTAssertEqual(try String(contentsOfFile: leftover, encoding: .utf8), "not ours")
        XCTAssertEqual(rotated["frames_written"] as? Int, 7 * 44100)
        let readers = try paths.map { try SoundFileReader(path: $0) }
        XCTAssertEqual(readers.map(\.frames), [88200, 88200, 88200, 44100])
        // Each file's bext time reference is its own first frame's wall time,
        // measured: the later files' within a millisecond of the second's plus
        // the frames since (the first file's is read again once the clock's
        // loop has settled, FileOriginTests; on a machine too busy for it to
        // settle within the file, it stays its first callback's time: within
        // that callback's lateness, about 2 ms).
        // A dummy jackd that xruns restarts its timing from the late cycle
        // (docs/JACK-FINDINGS.md): the wall time it lost has no frames, so a file after
        // an xrun starts later than the frames say (by more than the xrun's
        // reported delay: seen 22 ms after one of 7 ms). Across xruns only
        // the direction is checked, and that it stays within 100 ms and 25 ms
        // an xrun (a CI run with two shards side by side: 310 ms after 22
        // xruns in a file's 2 s).
        let log = logEvents("\(folder)/rot-001.log")
        let xrunFrames = log.filter { $0["event"] as? String == "xrun" }.compactMap { $0["at_frame"] as? Int }
        let references = try readers.map { try XCTUnwrap($0.broadcastTimeReference) }
        for (index, reference) in references.enumerated() {
            let distance = Double(Int64(reference) - Int64(references[1])), frames = Double((index - 1) * 88200)
            let between = min(index, 1) * 88200..<max(index, 1) * 88200
            guard xrunFrames.contains(where: between.contains) else {
                XCTAssertEqual(distance, frames, accuracy: index == 0 ? 220 : 44,
                               "file \(index + 1): references \(references), xruns at \(xrunFrames), log \(log.filter { $0["event"] as? String != "rotated" })")
                continue
            }
            let later = index == 0 ? frames - distance : distance - frames
            let lost = 4410 + 1100 * Double(xrunFrames.filter(between.contains).count)
            XCTAssertTrue(((index == 0 ? -220 : -44)...lost).contains(later), "file \(index + 1): \(later) frames off across xruns at \(xrunFrames)")
        }
        XCTAssertEqual(log.filter { $0["event"] as? String == "rotated" }.compactMap { $0["at_frame"] as? Int },
                       [88200, 176400, 264600])
        XCTAssertEqual(log.filter { $0["event"] as? String == "part_skipped" }.count, 1, "\(log)")

        // Joined, the four files are the single take from the rotating take's
        // first frame on. Each stretch between logged gaps (silence in that
        // take only; a gap measured by the wall clock may also shift what
        // follows by a few frames between two takes) is found in the single
        // take by its samples, and must equal it there, across every file boundary.
        var joined: [Float] = []
        for reader in readers { joined += reader.readAll() }
        let one = try SoundFileReader(path: "\(folder)/one.wav").readAll()
        func gaps(_ logPath: String) -> [Range<Int>] {
            gapRanges(logEvents(logPath)).sorted { $0.lowerBound < $1.lowerBound }
        }
        let stretches = JackTestSupport.stretches(of: 0..<(joined.count / 2), between: gaps("\(folder)/rot-001.log"))
        let singleGaps = gaps("\(folder)/one.log")
        // A sender late on a loaded machine leaves a period in the loopback
        // twice, in both takes alike: of the places whose samples match, the
        // one nearest where the frame times put it.
        func firstFrameTime(_ logPath: String) throws -> UInt32 {
            let started = logEvents(logPath).first { $0["event"] as? String == "started" }
            return UInt32(try XCTUnwrap(started?["first_frame_time"] as? Int, "\(logPath) has no start"))
        }
        let offset = Int(Int32(bitPattern: try firstFrameTime("\(folder)/rot-001.log") &- firstFrameTime("\(folder)/one.log")))
        var compared = 0, differing = 0
        var firstDifference: Int?
        for stretch in stretches where stretch.count >= 64 {
            let key = stretch.lowerBound
            let matches = (0..<(one.count / 2 - 16)).filter { candidate in
                (0..<16).allSatisfy { joined[(key + $0) * 2].bitPattern == one[(candidate + $0) * 2].bitPattern }
            }
            guard let at = matches.min(by: { abs($0 - key - offset) < abs($1 - key - offset) }) else {
                XCTFail("frames from \(key) of the rotated take are nowhere in the single take")
                continue
            }
            for frame in 0..<min(stretch.count, one.count / 2 - at) {
                if singleGaps.contains(where: { $0.contains(at + frame) }) { continue }
                compared += 1
                if joined[(key + frame) * 2].bitPattern != one[(at + frame) * 2].bitPattern
                    || joined[(key + frame) * 2 + 1].bitPattern != one[(at + frame) * 2 + 1].bitPattern {
                    differing += 1
                    firstDifference = firstDifference ?? key + frame
                }
            }
        }
        print("rotation: \(compared) frames compared in \(stretches.count) stretch(es), \(differing) differ")
        XCTAssertEqual(differing, 0, "first differing frame of the rotated take: \(firstDifference ?? -1)")
        XCTAssertGreaterThan(compared, 6 * 44100, "most of the take is compared")
        XCTAssertGreaterThan(joined.map { abs($0) }.max() ?? 0, 0.01, "the signal was there")
    }
}
