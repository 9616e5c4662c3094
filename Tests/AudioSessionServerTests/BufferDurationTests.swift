import JackAudioSession
import JackTestSupport
import XCTest

/// Test 2: the preferred I/O buffer duration becomes a JACK period request,
/// and `ioBufferDuration` reports what the server actually runs.
final class BufferDurationTests: JackTestCase {
    func testDurationToPeriodMapping() {
        // Expected values written out: nearest power of two (log scale), 16…4096.
        let cases: [(Double, Int, Int)] = [
            (0.005, 48000, 256), (0.0013, 48000, 64), (0.00533, 48000, 256), (0.0029, 44100, 128),
            (0.002, 48000, 128), (0.0001, 48000, 16), (1.0, 48000, 4096), (0.0107, 96000, 1024),
        ]
        for (seconds, rate, frames) in cases {
            XCTAssertEqual(BufferDuration.periodFrames(forDuration: seconds, sampleRate: rate), frames,
                           "\(seconds) s at \(rate) Hz")
        }
    }

    func testPreferenceIsRequestedOnActivationAndReported() throws {
        let server = try startServer(period: 1024)
        let session = AudioSession(clientName: "period", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback, mode: .measurement)
        try session.setPreferredIOBufferDuration(0.005)
        XCTAssertEqual(session.preferredIOBufferDuration, 0.005)
        try session.setActive(true)
        XCTAssertEqual(session.ioBufferFrames, 256)
        XCTAssertEqual(session.ioBufferDuration, 256.0 / 48000.0, accuracy: 1e-12)

        // While active, a new preference applies at once.
        try session.setPreferredIOBufferDuration(0.0013)
        XCTAssertEqual(session.ioBufferFrames, 64)
        XCTAssertEqual(session.ioBufferDuration, 64.0 / 48000.0, accuracy: 1e-12)
    }

    func testChangeByAnotherClientIsReflected() throws {
        let server = try startServer(period: 256)
        let session = AudioSession(clientName: "period", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback, mode: .measurement)
        try session.setActive(true)
        XCTAssertEqual(session.ioBufferFrames, 256)
        let result = try run(["jack_bufsize", "512"], environment: ["JACK_DEFAULT_SERVER": server.name])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(waitUntil { session.ioBufferFrames == 512 }, "ioBufferFrames \(session.ioBufferFrames)")
        XCTAssertEqual(session.ioBufferDuration, 512.0 / 48000.0, accuracy: 1e-12)
    }

    func testNonPositiveDurationIsBadParam() {
        let session = AudioSession(clientName: "period", serverName: "unused")
        for value in [0, -0.01, .nan, .infinity] {
            XCTAssertThrowsError(try session.setPreferredIOBufferDuration(value)) { error in
                XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .badParam)
            }
        }
    }
}
