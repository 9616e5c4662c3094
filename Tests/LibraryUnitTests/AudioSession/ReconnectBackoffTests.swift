@testable import JackAudioSession
import XCTest

/// The reconnect's pace, decided on its own (no server, no waiting).
final class ReconnectBackoffTests: XCTestCase {
    /// While no server is there the delay doubles from 50 ms to 1 s; a
    /// socket that appears cuts a pause short and the next one is 10 ms.
    func testTheDelayDoublesToASecondAndTheSocketsAppearanceCutsItShort() {
        var backoff = ReconnectBackoff()
        var pauses: [Double] = []
        for step in 0..<7 {
            let next = backoff.nextPause(serverStarting: false, now: Double(step))
            XCTAssertFalse(next.paced)
            pauses.append(next.seconds)
            backoff.paused(woken: false)
        }
        XCTAssertEqual(pauses, [0.05, 0.1, 0.2, 0.4, 0.8, 1, 1])
        backoff.paused(woken: true)
        XCTAssertEqual(backoff.nextPause(serverStarting: false, now: 8).seconds, 0.01)
    }

    /// A starting jackd (socket there, process running) that does not take
    /// a client yet is tried every 20 ms, whatever the delay had grown to,
    /// for 3 s; then the delay again (a server that never takes this client
    /// is not polled for ever). Under load a jackd took 0.6 s from its socket
    /// to its first client, and a doubled delay slept up to 0.64 s past that.
    func testAStartingServerIsTriedEvery20msForThreeSeconds() {
        var backoff = ReconnectBackoff()
        for step in 0..<6 {
            _ = backoff.nextPause(serverStarting: false, now: Double(step))
            backoff.paused(woken: false)
        }
        XCTAssertEqual(backoff.delay, 1)
        var now = 100.0
        var paced = 0
        while backoff.nextPause(serverStarting: true, now: now).paced {
            paced += 1
            now += ReconnectBackoff.startingPace
        }
        XCTAssertEqual(Double(paced) * ReconnectBackoff.startingPace, ReconnectBackoff.startingWindow, accuracy: 0.05)
        XCTAssertEqual(backoff.nextPause(serverStarting: true, now: now).seconds, 1, "after the window, the delay")
        // The server went and starts again: a new window.
        XCTAssertFalse(backoff.nextPause(serverStarting: false, now: now + 1).paced)
        XCTAssertTrue(backoff.nextPause(serverStarting: true, now: now + 2).paced)
    }
}
