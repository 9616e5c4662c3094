import Foundation
import JackTestSupport
@testable import Recording
import Synchronization
import XCTest

/// A logger that keeps its disk from filling: `--min-free` deletes its own
/// oldest files (never another program's, whatever its name) and `--keep`
/// deletes its files once older than that; each deletion is logged and in
/// the manifest.
final class RecordRetentionTests: JackTestCase {
    func testMinFreeNeverLetsTheDiskFillAndDeletesOnlyItsOwnOldestFiles() throws {
        let mountPoint = try mountSmallDisk(megabytes: 4)
        defer { unmountSmallDisk(mountPoint) }
        // Another program's file, named as the logger names its own.
        let stranger = "\(mountPoint)/take-000000.wav"
        XCTAssertTrue(FileManager.default.createFile(atPath: stranger, contents: Data(count: 100_000)))
        let server = try startServer(period: 256)
        // 14 s of 2 × 32-bit float is 5.4 MB, on a 4 MiB disk that keeps 1.5 MiB free.
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "system:capture_*", "--output", "\(mountPoint)/take-%H%M%S.wav",
            "--rotate", "1s", "--for", "14", "--min-free", "1.5M"])
        let summary = try XCTUnwrap(recorder.finish(timeout: 60), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertEqual(summary["unwritten_frames"] as? Int, 0)
        XCTAssertEqual(summary["frames_written"] as? Int, 14 * 48000)
        XCTAssertNil(recorder.event("disk_full"), "the disk filled")
        let deleted = recorder.objects.filter { $0["event"] as? String == "deleted" }
        XCTAssertGreaterThanOrEqual(deleted.count, 3, recorder.stderr)
        let paths = try XCTUnwrap(summary["paths"] as? [String])
        // The oldest first, each logged with its age and why.
        XCTAssertEqual(deleted.compactMap { $0["path"] as? String }, Array(paths.prefix(deleted.count)))
        for event in deleted {
            XCTAssertGreaterThanOrEqual(event["age_seconds"] as? Double ?? -1, 0)
            XCTAssertTrue((event["reason"] as? String ?? "").contains("--min-free"), "\(event)")
        }
        for path in paths.prefix(deleted.count) { XCTAssertFalse(FileManager.default.fileExists(atPath: path), path) }
        for path in paths.dropFirst(deleted.count) { XCTAssertTrue(FileManager.default.fileExists(atPath: path), path) }
        XCTAssertEqual(FileManager.default.contents(atPath: stranger)?.count, 100_000, "another program's file was touched")
        let manifest = try XCTUnwrap(summary["manifest_path"] as? String)
        XCTAssertEqual(TakeManifest.read(manifest).lines.filter { $0.event == .deleted }.count, deleted.count)
    }

    func testKeepDeletesFilesOnceOlderThanThat() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The wall clock is set two minutes forward 4 s into the take: the
        // files before it are then older than the minute kept.
        let clock = ScriptedWallClock(start: Date().timeIntervalSince1970, steps: [.init(afterSeconds: 4, seconds: 120)])
        var configuration = Recorder.Configuration(outputPath: "\(folder)/take-%H%M%S.wav")
        configuration.serverName = server.name
        configuration.portPatterns = ["loopback:capture_1"]
        configuration.duration = 8
        configuration.rotateSeconds = 1
        configuration.clock = clock
        configuration.timeZone = .utc
        configuration.retention = Retention(keepSeconds: 60)
        let recorder = Recorder(configuration: configuration)
        var events: [RecordingEvent] = []
        let collected = Task { for await event in recorder.eventStream { events.append(event) } ; return events }
        try recorder.prepare()
        XCTAssertTrue(recorder.waitUntilFinished(timeout: 60))
        recorder.stop()
        let seen = awaitResult(collected)
        let summary = recorder.summary
        let manifest = TakeManifest.read(try XCTUnwrap(summary.manifestPath)).lines
        let closedBeforeStep = manifest.filter { $0.event == .closed && ($0.endUTC ?? .infinity) < clock.start + 4.5 }
        let deletedPaths = seen.compactMap { event -> String? in
            if case let .deleted(path, age, reason) = event {
                XCTAssertGreaterThan(age, 60)
                XCTAssertTrue(reason.contains("--keep"), reason)
                return path
            }
            return nil
        }
        XCTAssertGreaterThanOrEqual(closedBeforeStep.count, 3)
        XCTAssertEqual(Set(deletedPaths.map { ($0 as NSString).lastPathComponent }),
                       Set(closedBeforeStep.map { ($0.path as NSString).lastPathComponent }))
        for path in summary.paths where !deletedPaths.contains(path) {
            XCTAssertTrue(FileManager.default.fileExists(atPath: path), path)
        }
        // What the logger deleted itself is said, and is not a problem (`jas verify`).
        let verification = try ManifestVerification(manifestPath: try XCTUnwrap(summary.manifestPath))
        XCTAssertTrue(verification.intact, "\(verification.findings)")
        XCTAssertEqual(verification.findings.filter { $0.kind == .deletedByRetention }.count, deletedPaths.count)
        XCTAssertEqual(verification.filesIntact, summary.paths.count - deletedPaths.count)
    }

    private func awaitResult<T: Sendable>(_ task: Task<T, Never>) -> T {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<T?>(nil)
        Task {
            let value = await task.value
            box.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.withLock { $0! }
    }
}
