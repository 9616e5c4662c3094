import Foundation
import JackTestSupport
import Synchronization
import XCTest

/// A hook a take runs inherits none of the take's files: not the FIFO it
/// writes to, not its log or manifest. Otherwise a hook that lives on, or a
/// daemon it starts, holds the FIFO open, and its reader never sees the end
/// of the take. Real processes: `jas record` into a FIFO the test reads, an
/// `--on-silence` hook that lists its own descriptors and starts a daemon
/// in a session of its own (which the end of the take does not stop).
final class RecordHookDescriptorTests: JackTestCase {
    /// The targets of a process's descriptors, by number (`/proc/PID/fd`).
    private func descriptors(of pid: Int32) -> [String: String] {
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return Dictionary(uniqueKeysWithValues: names.map { name in
            (name, (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(name)")) ?? "?")
        })
    }

    func testAHookInheritsNoneOfTheTakesFilesAndTheFIFOsReaderSeesTheEnd() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = "\(folder)/take.flac"
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        // Read without blocking: before jas opens the FIFO a read finds nothing; once bytes came, a read of 0 is the end.
        let reading = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(reading, 0)
        defer { close(reading) }
        let bytesRead = Atomic<Int>(0), sawEnd = Atomic<Bool>(false), stopReading = Atomic<Bool>(false)
        let readerDone = DispatchSemaphore(value: 0)
        Thread {
            defer { readerDone.signal() }
            var buffer = [UInt8](repeating: 0, count: 65536)
            while !stopReading.load(ordering: .relaxed) {
                var wanted = pollfd(fd: reading, events: Int16(POLLIN), revents: 0)
                _ = poll(&wanted, 1, 100)
                let count = read(reading, &buffer, buffer.count)
                if count > 0 { bytesRead.add(count, ordering: .relaxed) }
                if count == 0 && bytesRead.load(ordering: .relaxed) > 0 {
                    sawEnd.store(true, ordering: .releasing)
                    return
                }
            }
        }.start()
        defer { stopReading.store(true, ordering: .relaxed); readerDone.wait() }

        let shellPID = "\(folder)/hook.pid", daemonPID = "\(folder)/daemon.pid"
        // Nothing plays into loopback:playback_1: its capture is silent from the start. The hook's shell
        // starts a daemon in a session of its own, then becomes a sleep (same process, same descriptors).
        let hook = "echo $$ > '\(shellPID)'; setsid sh -c 'echo $$ > \"\(daemonPID)\"; exec sleep 60' > /dev/null 2>&1 & exec sleep 60"
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "loopback:capture_1", "--output", fifo, "--format", "flac", "--for", "4",
            "--silence-threshold", "-50dBFS", "--silence-hold", "0.5s", "--on-silence", hook])
        func pid(in file: String) -> Int32? {
            (try? String(contentsOfFile: file, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        var daemon: Int32?
        defer { if let daemon { kill(daemon, SIGKILL) } }
        XCTAssertTrue(waitUntil(timeout: 15) { pid(in: daemonPID) != nil && pid(in: shellPID) != nil },
                      "the hook never ran: \(recorder.objects) \(recorder.stderr)")
        daemon = pid(in: daemonPID)
        let daemonID = try XCTUnwrap(daemon), shellID = try XCTUnwrap(pid(in: shellPID))

        // What the hook and the daemon hold: standard input, output and error, nothing of the take.
        for (who, id) in [("the hook", shellID), ("the daemon the hook started", daemonID)] {
            // A program just exec'd holds, for a moment, the library its loader maps (seen on a loaded machine: the
            // daemon's sleep with libc.so.6 open as 3): what it holds once that is over counts.
            var files = descriptors(of: id)
            _ = waitUntil(timeout: 5) {
                files = descriptors(of: id)
                return Set(files.keys) == ["0", "1", "2"]
            }
            XCTAssertEqual(Set(files.keys), ["0", "1", "2"], "\(who) holds \(files)")
            XCTAssertFalse(files.values.contains { $0.hasPrefix(folder) }, "\(who) holds \(files)")
        }

        // The take ends; its reader sees the end while the daemon still runs.
        let summary = try XCTUnwrap(recorder.finish(timeout: 30), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertEqual(summary["frames_written"] as? Int, 4 * 48000)
        XCTAssertTrue(waitUntil(timeout: 5) { sawEnd.load(ordering: .acquiring) },
                      "the FIFO's reader saw no end of file after \(bytesRead.load(ordering: .relaxed)) bytes")
        XCTAssertEqual(kill(daemonID, 0), 0, "the daemon had ended: the test showed nothing")
        XCTAssertTrue(recorder.objects.contains { $0["event"] as? String == "silence" }, "\(recorder.objects)")
    }
}
