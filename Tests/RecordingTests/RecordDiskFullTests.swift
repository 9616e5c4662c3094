import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// The disk fills up while recording (another program took the space after
/// the check): `jas record` stops there, says why, exits 1, and the file
/// holds everything that fitted.
final class RecordDiskFullTests: JackTestCase {
    func testDiskFullStopsCleanlyWithWhatFitted() throws {
        let mountPoint = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        guard try run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint]).status == 0 else {
            throw XCTSkip("cannot mount a small tmpfs here (needs root)")
        }
        defer { _ = try? run(["umount", mountPoint]) }
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "system:capture_*", "--output", "\(mountPoint)/take.wav",
            "--for", "6"])
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
