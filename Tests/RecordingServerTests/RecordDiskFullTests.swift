import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// The disk fills up while recording (another program took the space after
/// the check). By default the take goes on: the file so far is closed and
/// valid, the frames that found no room are a logged gap, and writing
/// resumes in a new file once there is room. With --stop-on-disk-full it
/// stops there, says why, exits 1, and the file holds everything that fitted.
final class RecordDiskFullTests: JackTestCase {
    func testTheTakeGoesOnAfterTheDiskFillsAndTheTimeWithoutRoomIsAGap() throws {
        let mountPoint = try mountSmallDisk(megabytes: 4)
        defer { unmountSmallDisk(mountPoint) }
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "system:capture_*", "--output", "\(mountPoint)/take.wav", "--for", "8"])
        XCTAssertTrue(waitUntil(timeout: 10) { (recorder.objects.last { $0["event"] as? String == "progress" }?["frames_written"] as? Int ?? 0) > 48000 },
                      recorder.stderr)
        // Another program takes all the room there is.
        let filler = "\(mountPoint)/filler"
        XCTAssertGreaterThan(fillDisk(with: filler), 0)
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("disk_full") != nil }, recorder.stderr)
        let fullAt = Date()
        XCTAssertTrue(waitUntil(timeout: 10) { Date().timeIntervalSince(fullAt) >= 1.5 })
        try FileManager.default.removeItem(atPath: filler)
        let summary = try XCTUnwrap(recorder.finish(timeout: 40), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertNil(summary["problem"] as? String)
        let written = try XCTUnwrap(summary["frames_written"] as? Int)
        let unwritten = try XCTUnwrap(summary["unwritten_frames"] as? Int)
        XCTAssertEqual(written + unwritten, 8 * 48000, "the timeline is whole")
        let gap = try XCTUnwrap(recorder.objects.first { $0["event"] as? String == "gap" && $0["reason"] as? String == "disk-full" })
        XCTAssertEqual(gap["frames"] as? Int, unwritten)
        XCTAssertEqual(gap["resumed"] as? Bool, true)
        // The gap's length is the time without room: from the first file's end to the second's start.
        let manifest = try XCTUnwrap(summary["manifest_path"] as? String)
        let closed = TakeManifest.read(manifest).lines.filter { $0.event == .closed }
        XCTAssertEqual(closed.count, 2, "\(closed)")
        guard closed.count == 2 else { return }
        let away = try XCTUnwrap(closed[1].startUTC) - XCTUnwrap(closed[0].endUTC)
        let gaps = recorder.objects.filter { $0["event"] as? String == "gap" }
        XCTAssertEqual(away, Double(unwritten) / 48000, accuracy: 0.05,
                       "files: \(closed); gaps: \(gaps); xruns: \(summary["xruns"] ?? "none")")
        XCTAssertGreaterThan(away, 1.4)
        XCTAssertEqual(closed[1].gaps, [ManifestLine.Gap(atFrame: 0, frames: Int64(unwritten), reason: "disk-full", written: false)])
        // Both files are valid, hold what the summary says, and are what the manifest hashed.
        let paths = try XCTUnwrap(summary["paths"] as? [String])
        XCTAssertEqual(paths.map { ($0 as NSString).lastPathComponent }, ["take.wav", "take-part2.wav"])
        var frames: Int64 = 0
        for (path, entry) in zip(paths, closed) {
            XCTAssertEqual(try run(["sox", "--i", "-s", path]).status, 0, path)
            frames += try SoundFileReader(path: path).frames
            let digest = try run(["sha256sum", path]).output.split(separator: " ").first.map(String.init)
            XCTAssertEqual(entry.sha256, digest, path)
        }
        XCTAssertEqual(frames, Int64(written))
    }

    func testWithStopOnDiskFullTheTakeStopsCleanlyWithWhatFitted() throws {
        let mountPoint = try mountSmallDisk(megabytes: 3)
        defer { unmountSmallDisk(mountPoint) }
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "system:capture_*", "--output", "\(mountPoint)/take.wav",
            "--for", "6", "--stop-on-disk-full"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        // 6 s of 2 × 32-bit float need 2.2 MiB of the 3 MiB; another program now takes 1.5 MiB.
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(mountPoint)/filler",
                                                    contents: Data(count: 1_536 * 1024)))
        let summary = try XCTUnwrap(recorder.finish(), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 1, recorder.stderr)
        let problem = try XCTUnwrap(summary["problem"] as? String)
        XCTAssertTrue(problem.localizedCaseInsensitiveContains("space"), problem)
        XCTAssertNotNil(recorder.event("write_failed"))
        let written = try XCTUnwrap(summary["frames_written"] as? Int)
        XCTAssertLessThan(written, 6 * 48000)
        XCTAssertGreaterThan(written, 2 * 48000)
        // The file is finalised: it opens and holds what was written.
        let file = try SoundFileReader(path: "\(mountPoint)/take.wav")
        // The summary says what the file holds, to the frame (a full disk takes part of the last write).
        XCTAssertEqual(file.frames, Int64(written))
        XCTAssertEqual(try run(["sox", "--i", "-s", "\(mountPoint)/take.wav"]).status, 0)
    }
}
