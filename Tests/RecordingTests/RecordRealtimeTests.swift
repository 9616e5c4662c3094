import AllocationCounter
import Foundation
import JackTestSupport
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
        var configuration = Recorder.Configuration(outputPath: "\(folder)/take.wav")
        configuration.serverName = server.name
        configuration.portPatterns = ["loopback:capture_*"]
        let recorder = Recorder(configuration: configuration)
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
}
