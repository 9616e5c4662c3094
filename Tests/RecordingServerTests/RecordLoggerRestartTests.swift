import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// The same logger command run again, as a supervisor does: after a SIGKILL
/// and after a take that ended on a full disk (--stop-on-disk-full), it is
/// not refused by its own files, goes on numbering them, and its manifest
/// stays whole: every file it wrote listed once as closed (the one the kill
/// left open by the next run), with the SHA-256 the file has.
final class RecordLoggerRestartTests: JackTestCase {
    func testARestartedLoggerGoesOnAndItsManifestIsWhole() throws {
        let mountPoint = try mountSmallDisk(megabytes: 6)
        defer { unmountSmallDisk(mountPoint) }
        let server = try startServer(period: 256)
        let command = ["--server", server.name, "--ports", "system:capture_*", "--output", "\(mountPoint)/log.wav",
                       "--rotate", "1s", "--stop-on-disk-full"]

        // Killed mid-take.
        let killed = try RecordProcess(jas: jas, arguments: command + ["--for", "12"])
        XCTAssertTrue(waitUntil(timeout: 10) { killed.objects.contains { $0["event"] as? String == "rotated" } }, killed.stderr)
        kill(killed.process.processIdentifier, SIGKILL)
        killed.process.waitUntilExit()

        // Again: the disk fills (another program) and it stops, exit 1.
        let filled = try RecordProcess(jas: jas, arguments: command + ["--for", "12"])
        XCTAssertTrue(waitUntil(timeout: 10) { filled.event("recovered") != nil }, filled.stderr)
        XCTAssertTrue(waitUntil(timeout: 10) { filled.objects.contains { $0["event"] as? String == "rotated" } }, filled.stderr)
        let filler = "\(mountPoint)/filler"
        XCTAssertGreaterThan(fillDisk(with: filler), 0)
        XCTAssertNotNil(filled.finish(timeout: 30), filled.stderr)
        XCTAssertEqual(filled.process.terminationStatus, 1, filled.stderr)
        try FileManager.default.removeItem(atPath: filler)

        // And again: it goes on.
        let again = try RecordProcess(jas: jas, arguments: command + ["--for", "2"])
        let summary = try XCTUnwrap(again.finish(timeout: 30), again.stderr)
        XCTAssertEqual(again.process.terminationStatus, 0, again.stderr)

        let manifest = try XCTUnwrap(summary["manifest_path"] as? String)
        XCTAssertEqual(manifest, "\(mountPoint)/log.manifest.jsonl")
        let lines = TakeManifest.read(manifest).lines
        let closed = lines.filter { $0.event == .closed }
        let written = try FileManager.default.contentsOfDirectory(atPath: mountPoint).filter { $0.hasSuffix(".wav") }.sorted()
        XCTAssertEqual(closed.map(\.path).sorted(), written, "every file once, closed")
        XCTAssertEqual(Set(closed.map(\.path)).count, closed.count)
        // The file the kill left open, the one it may have created without listing it yet, and the full
        // disk's last, if its line found no room.
        XCTAssertTrue((1...3).contains(closed.filter { $0.recovered == true }.count), "\(closed)")
        XCTAssertEqual(closed.map(\.index), closed.map(\.index).sorted(), "numbering goes on")
        for entry in closed {
            let path = "\(mountPoint)/\(entry.path)"
            let digest = try run(["sha256sum", path]).output.split(separator: " ").first.map(String.init)
            XCTAssertEqual(entry.sha256, digest, entry.path)
            XCTAssertEqual(try SoundFileReader(path: path).frames, entry.frames, entry.path)
        }
    }

    /// A run killed after it created its next file and before it listed it
    /// (the manifest's line is written off the disk thread) left a file the
    /// manifest does not know, at the index it gives next. The next run is
    /// not refused by it: it is listed as recovered, its start marked as
    /// estimated, and numbering goes on after it.
    func testAFileTheKilledRunNeverListedIsRecoveredNotRefused() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        let command = ["--server", server.name, "--ports", "system:capture_*", "--output", "\(folder)/log.wav",
                       "--rotate", "1s"]
        let first = try RecordProcess(jas: jas, arguments: command + ["--for", "1.5"])
        XCTAssertNotNil(first.finish(timeout: 20), first.stderr)
        let manifestPath = "\(folder)/log.manifest.jsonl"
        let listed = TakeManifest.read(manifestPath).lines.filter { $0.event == .closed }
        let next = try XCTUnwrap(listed.map(\.index).max()) + 1
        let orphan = "\(folder)/log-\(String(format: "%03d", next)).wav"
        try FileManager.default.copyItem(atPath: "\(folder)/\(try XCTUnwrap(listed.first).path)", toPath: orphan)

        let again = try RecordProcess(jas: jas, arguments: command + ["--for", "1"])
        let summary = try XCTUnwrap(again.finish(timeout: 20), again.stderr)
        XCTAssertEqual(again.process.terminationStatus, 0, again.stderr)
        XCTAssertEqual(again.event("recovered")?["path"] as? String, orphan, "\(again.objects)")
        XCTAssertEqual(summary["manifest_path"] as? String, manifestPath)
        let lines = TakeManifest.read(manifestPath).lines.filter { $0.event == .closed }
        let recovered = try XCTUnwrap(lines.first { $0.path == (orphan as NSString).lastPathComponent }, "\(lines)")
        XCTAssertEqual(recovered.recovered, true)
        XCTAssertEqual(recovered.startEstimated, true)
        XCTAssertEqual(recovered.frames, try SoundFileReader(path: orphan).frames)
        XCTAssertEqual(recovered.index, next)
        XCTAssertTrue(lines.filter { $0.recovered != true }.allSatisfy { $0.startEstimated == nil }, "only it is estimated")
        XCTAssertGreaterThan(try XCTUnwrap(lines.map(\.index).max()), next, "numbering goes on after it")
    }
}
