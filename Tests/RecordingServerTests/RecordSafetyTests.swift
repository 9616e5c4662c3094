import Foundation
import JackTestSupport
import XCTest

/// The mistakes of a tired person at 3 a.m. and the odd things other programs
/// do never cost a take: existing files are never replaced unless asked, two
/// recorders never write one file, and a reader of stdout that goes away or a
/// stray SIGUSR1 does not stop a recording.
final class RecordSafetyTests: JackTestCase {
    func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    func testAnExistingTakeOrLogIsNeverReplacedUnlessAsked() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let take = "\(folder)/take.wav", log = "\(folder)/take.log"
        let old = Data("yesterday's take".utf8)
        XCTAssertTrue(FileManager.default.createFile(atPath: take, contents: old))
        let base = [jas, "record", "--server", server.name, "--ports", "loopback:capture_1", "--for", "0.5"]

        var result = try run(base + ["--output", take])
        XCTAssertEqual(result.status, 2, result.output)
        XCTAssertTrue(result.output.contains("'\(take)': it exists") && result.output.contains("--overwrite"), result.output)
        XCTAssertEqual(bytes(take), old)
        XCTAssertFalse(FileManager.default.fileExists(atPath: log), "a refused take left its log")

        // Its log path taken, by a file or a folder: nothing is touched either.
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(folder)/other.log", contents: old))
        result = try run(base + ["--output", "\(folder)/other.wav"])
        XCTAssertEqual(result.status, 2, result.output)
        XCTAssertTrue(result.output.contains("other.log': it exists"), result.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(folder)/other.wav"))
        XCTAssertEqual(mkdir(log, 0o700), 0)
        result = try run(base + ["--output", take, "--overwrite"])
        XCTAssertEqual(result.status, 2, result.output)
        XCTAssertTrue(result.output.contains("'\(log)': it is a folder"), result.output)
        XCTAssertEqual(bytes(take), old, "a check that failed truncated the take")
        XCTAssertEqual(rmdir(log), 0)

        // A symbolic link to a take counts as the take.
        XCTAssertEqual(symlink(take, "\(folder)/link.wav"), 0)
        result = try run(base + ["--output", "\(folder)/link.wav"])
        XCTAssertEqual(result.status, 2, result.output)
        XCTAssertTrue(result.output.contains("symbolic link"), result.output)
        XCTAssertEqual(bytes(take), old)

        // The take named like its own log.
        result = try run(base + ["--output", "\(folder)/take2.log"])
        XCTAssertEqual(result.status, 2, result.output)
        XCTAssertTrue(result.output.contains("same name"), result.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(folder)/take2.log"))

        result = try run(base + ["--output", take, "--overwrite"])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertGreaterThan(bytes(take)?.count ?? 0, 48000 * 4 / 2, "--overwrite did not record")
    }

    func testTwoRecordersNeverWriteOneFile() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let take = "\(folder)/take.wav"
        let first = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "loopback:capture_1",
                                                            "--output", take, "--for", "3"])
        XCTAssertTrue(waitUntil(timeout: 10) { first.event("recording") != nil }, first.stderr)
        for extra in [[], ["--overwrite"]] {
            let second = try run([jas, "record", "--server", server.name, "--ports", "loopback:capture_1",
                                  "--output", take, "--for", "1"] + extra)
            XCTAssertEqual(second.status, 2, second.output)
            XCTAssertTrue(second.output.contains(extra.isEmpty ? "it exists" : "another recording is writing it"),
                          second.output)
        }
        let summary = try XCTUnwrap(first.finish(), first.stderr)
        XCTAssertEqual(first.process.terminationStatus, 0)
        XCTAssertEqual(summary["frames_written"] as? Int, 3 * 48000)
        XCTAssertEqual(try SoundFileFrames.count(take), 3 * 48000)
    }

    func testAReaderOfStdoutThatGoesAwayOrAStraySIGUSR1DoesNotStopATake() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let take = "\(folder)/take.wav"
        // jas record --json | { head -3; sleep 1; }: the reader goes a second
        // after three lines, in the middle of the 6 s take.
        let started = Date()
        let shell = try run(["bash", "-c", "'\(jas)' record --json --server \(server.name) --ports loopback:capture_1 "
                             + "--output '\(take)' --for 6 | { head -3 >/dev/null; sleep 1; }; echo \"status ${PIPESTATUS[0]}\""])
        XCTAssertTrue(shell.output.contains("status 0"), shell.output)
        XCTAssertTrue(shell.output.contains("the recording goes on"), shell.output)
        XCTAssertEqual(try SoundFileFrames.count(take), 6 * 48000, "the take stopped when its reader went")
        let stopped = logEvents("\(folder)/take.log").first { $0["event"] as? String == "stopped" }
        XCTAssertEqual(stopped?["frames_written"] as? Int, 6 * 48000)
        XCTAssertEqual(stopped?["reason"] as? String, "duration reached")
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)

        let second = "\(folder)/second.wav"
        let recorder = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "loopback:capture_1",
                                                               "--output", second, "--for", "2"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("recording") != nil }, recorder.stderr)
        kill(recorder.process.processIdentifier, SIGUSR1)
        let summary = try XCTUnwrap(recorder.finish(), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0)
        XCTAssertEqual(summary["frames_written"] as? Int, 2 * 48000)
        XCTAssertTrue(recorder.stderr.contains("SIGUSR1 ignored"), recorder.stderr)
    }
}

/// Frames in a sound file, read with sox (an independent reader).
enum SoundFileFrames {
    static func count(_ path: String) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["soxi", "-s", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}
