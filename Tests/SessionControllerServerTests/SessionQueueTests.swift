import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
import Synchronization
import XCTest

/// The session's state has one owner, its queue: events are delivered on a
/// queue of their own, so a handler may call the session back; and work the
/// session scheduled for itself (reconnecting) does not keep it alive.
final class SessionQueueTests: JackTestCase {
    /// The issue: "a call from inside an event handler (e.g. `setActive(true)`
    /// on interruption ended) works without a recursive lock because events
    /// are delivered on their own queue, never while the core runs."
    func testAnObserverCallsTheSessionBackFromItsHandler() throws {
        let server = try startServer()
        let center = NotificationCenter()
        let session = AudioSession(clientName: "callback", serverName: server.name, notificationCenter: center)
        defer { session.close() }
        try session.setCategory(.playback)
        let seen = Mutex<(onMainThread: Bool, deactivated: Bool, error: String?)?>(nil)
        // The seeds' listing: an observer block on the route-change notification.
        let token = center.addObserver(forName: AudioSessionNotification.routeChange, object: nil, queue: nil) { _ in
            let onMain = Thread.isMainThread
            do {
                // Back into the session, from its own event: the first
                // activation's categoryChange.
                try session.setActive(false)
                seen.withLock { $0 = (onMain, !session.isActive, nil) }
            } catch {
                seen.withLock { $0 = (onMain, false, "\(error)") }
            }
        }
        defer { center.removeObserver(token) }

        try session.setActive(true)
        XCTAssertTrue(waitUntil { seen.withLock { $0 } != nil }, "the observer never ran")
        let result = try XCTUnwrap(seen.withLock { $0 })
        XCTAssertNil(result.error)
        XCTAssertTrue(result.deactivated, "setActive(false) from the handler took effect")
        XCTAssertFalse(result.onMainThread, "events are delivered on the session's event queue, not the caller's thread")
        XCTAssertFalse(session.isActive)
    }

    /// The issue: "the reconnect thread holds the session strongly, so a
    /// session released without `close()` reconnects for ever." Released
    /// while its server is gone, the session goes, and does not come back
    /// with the server.
    func testASessionReleasedWhileReconnectingIsGoneAndStaysGone() throws {
        let server = try startServer()
        // A witness kept alive through the same loss: once it is back, a released session that still
        // reconnected (the same backoff, woken by the same socket) would be back too.
        let witness = AudioSession(clientName: "witness", serverName: server.name, recordConsent: .givenByCaller)
        defer { witness.close() }
        try witness.setCategory(.playAndRecord, options: [.mixWithOthers])
        try witness.setActive(true)
        let witnessEvents = EventRecorder(witness)
        weak var released: AudioSession?
        do {
            let session = AudioSession(clientName: "orphan", serverName: server.name, recordConsent: .givenByCaller)
            try session.setCategory(.playAndRecord)
            try session.setActive(true)
            let recorder = EventRecorder(session)
            server.stop()
            XCTAssertTrue(waitUntil {
                recorder.events.contains { if case .mediaServicesWereLost = $0 { true } else { false } }
            })
            // Let the dead client's close finish and the retries begin (the
            // first retry is 50 ms after it): released only once reconnecting.
            Thread.sleep(forTimeInterval: 1)
            XCTAssertNil(session.client, "still reconnecting: the server is gone")
            released = session
        }
        XCTAssertTrue(waitUntil { released == nil }, "the reconnect loop kept the released session alive")

        let returned = try startServer(name: server.name)
        let probe = try Client(name: "probe", serverName: returned.name)
        defer { _ = probe.close() }
        XCTAssertTrue(waitUntil(timeout: 20) {
            witnessEvents.events.contains { if case .mediaServicesWereReset = $0 { true } else { false } }
                && !probe.portNames(matching: "^witness:").isEmpty
        }, "the witness did not come back: \(witnessEvents.events)")
        // Opens in one process take turns (one lane): two more of the witness's arbitrations (the timer's
        // 100 ms each, after its open) leave a reconnect that was due at the same wake-up time to show.
        let looks = witness.arbitrationsCompleted
        XCTAssertTrue(waitUntil(timeout: 10) { witness.arbitrationsCompleted >= looks + 2 })
        XCTAssertEqual(probe.portNames(matching: "orphan:"), [], "a released session came back with the server")
    }
}
