import AllocationCounter
import Foundation
import JackTestSupport
import LoopbackHarness
import Recording
import XCTest

/// The recording's process callback allocates nothing and frees nothing
/// (counted on the real-time thread; `make rtsan` runs it under
/// RealtimeSanitizer too), while the disk thread writes 16 channels.
final class RecordRealtimeTests: JackTestCase {
    func testRecordingCallbackAllocatesNothing() throws {
        let server = try startServer(loopbackChannels: 16, period: 64)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorder = Self.recorder(of: server, into: folder)
        allocation_counter_reset()
        try recorder.prepare()
        // 3,000 cycles written (on a loaded machine the take starts a while after the first cycles).
        XCTAssertTrue(waitUntil(timeout: 60) { recorder.progress().framesWritten >= 3_000 * 64 })
        let realtimeEvents = allocation_counter_realtime_events()
        recorder.stop()
        let summary = recorder.summary
        XCTAssertEqual(summary.channels, 16)
        XCTAssertGreaterThanOrEqual(summary.framesWritten, 3_000 * 64)
        XCTAssertGreaterThan(allocation_counter_all_events(), 0, "the counter is installed and sees this process")
        XCTAssertEqual(realtimeEvents, 0, "heap allocations or frees inside the recording's process callback")
    }

    /// The disk thread sleeps until the callback says 20 ms of frames wait
    /// (`Recorder.wakeEveryFrames`: every fourth cycle at 256 frames, about
    /// 47 wake-ups a second). Its timeout must not run out between two of
    /// the callback's posts: at 20 ms it did, just before each one, and the
    /// thread woke about 94 times a second. Counted per second of audio, from
    /// the thread's voluntary context switches (each sleep is one).
    func testTheDiskThreadSleepsUntilTheCallbackWakesIt() throws {
        let server = try startServer(loopbackChannels: 2, period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorder = Self.recorder(of: server, into: folder)
        try recorder.prepare()
        defer { recorder.stop() }
        XCTAssertTrue(waitUntil(timeout: 30) { recorder.progress().framesWritten >= 48000 })
        let first = try XCTUnwrap(Self.voluntarySwitches(ofThreadNamed: "jas-record-disk"), "the disk thread runs")
        let from = recorder.progress().framesWritten
        XCTAssertTrue(waitUntil(timeout: 60) { recorder.progress().framesWritten >= from + 3 * 48000 })
        let last = try XCTUnwrap(Self.voluntarySwitches(ofThreadNamed: "jas-record-disk"))
        let seconds = Double(recorder.progress().framesWritten - from) / 48000
        let perSecond = Double(last - first) / seconds
        print(String(format: "disk thread: %.1f sleeps per second of audio", perSecond))
        XCTAssertLessThan(perSecond, 70, "woken more often than the callback's 47 posts a second")
        XCTAssertGreaterThan(perSecond, 10, "it sleeps between the posts")
    }

    /// A recorder of the server's loopback captures into `folder`/take.wav, not yet prepared.
    private static func recorder(of server: LoopbackServer, into folder: String) -> Recorder {
        var configuration = Recorder.Configuration(outputPath: "\(folder)/take.wav")
        configuration.serverName = server.name
        configuration.portPatterns = ["loopback:capture_*"]
        return Recorder(configuration: configuration)
    }

    /// Voluntary context switches of this process's thread named `name` (/proc).
    private static func voluntarySwitches(ofThreadNamed name: String) -> Int? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        for task in tasks {
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard comm == name, let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)
            else { continue }
            let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            return line.flatMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }
        }
        return nil
    }
}
