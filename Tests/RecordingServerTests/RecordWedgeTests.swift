import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// When libjack gets stuck in the recorder's process (jack2 #395), the take
/// is finalised, the reason is said, and the exit status asks a supervisor
/// for a restart: the recorder never hangs silently.
final class RecordWedgeTests: JackTestCase {
    func testAWedgedLibjackFinalisesTheTakeAndExitsWithTheRestartStatus() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/take.wav"
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "loopback:capture_1", "--output", path, "--for", "3"],
            environment: ["LD_PRELOAD": try HookLibrary.closeRace.path(), "CLOSE_RACE_HOLD_MS": "600000"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.objects.contains { $0["event"] as? String == "progress" } },
                      recorder.stderr)
        // A client arriving: the recorder's notification thread now sits inside libjack, holding its mutex.
        let arrival = try Client(name: "arrival", serverName: server.name)
        defer { arrival.close() }
        let summary = recorder.finish(timeout: 3 + ClientLifecycle.closeBound + 10)
        XCTAssertEqual(recorder.process.terminationStatus, 75, recorder.stderr)
        // Either the close finds the notification thread stuck, or (when the
        // held thread's unread notifications filled its socket and jackd
        // itself blocks writing to it) the deactivation before it never returns.
        XCTAssertTrue(recorder.stderr.contains("jas record: the notification thread of JACK client")
                      || recorder.stderr.contains("jas record: deactivating JACK client 'jas-record' did not return"),
                      recorder.stderr)
        XCTAssertTrue(recorder.stderr.contains("exiting with status 75"), recorder.stderr)
        XCTAssertEqual(recorder.stderr.components(separatedBy: "exiting with status").count, 2, "said once")
        let written = try XCTUnwrap(summary?["frames_written"] as? Int, "the summary is written before the exit")
        XCTAssertEqual(written, 3 * 48000)
        let reader = try SoundFileReader(path: path)
        XCTAssertEqual(reader.readAll().count, written, "the file's header was finalised")
    }
}
