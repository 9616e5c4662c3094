import JackRuntime
import JackAudioSession
import Foundation
import JackTestSupport
import LoopbackHarness
import Synchronization
import XCTest

/// The notifications as the seeds' listings read them: observers registered
/// on `NotificationCenter.default` with the session as the object, each value
/// read `as? UInt` and turned into its type by raw value. Code ported from
/// iOS must see what it saw there.
final class SeedNotificationTests: JackTestCase {
    /// What one observer received, for the test thread to read.
    final class Received: @unchecked Sendable { // `notes` is guarded by `lock`
        private let lock = NSLock()
        private var notes: [(userInfo: [AnyHashable: Any], mainThread: Bool)] = []
        private var tokens: [NSObjectProtocol] = []

        /// Observes `name` from `object` exactly as the seeds do (object: the session).
        init(_ name: Notification.Name, object: AudioSession) {
            let token = NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { [weak self] note in
                guard let self else { return }
                let main = Thread.isMainThread
                lock.withLock { notes.append((note.userInfo ?? [:], main)) }
            }
            tokens.append(token)
        }

        deinit { tokens.forEach(NotificationCenter.default.removeObserver) }

        var userInfos: [[AnyHashable: Any]] { lock.withLock { notes.map(\.userInfo) } }
        var onMainThread: [Bool] { lock.withLock { notes.map(\.mainThread) } }
    }

    private func player(_ name: String, _ server: LoopbackServer, port: Int,
                        category: Category = .playback, options: CategoryOptions = []) throws -> AudioSession {
        let session = AudioSession(clientName: name, serverName: server.name)
        try session.setCategory(category, options: options)
        session.setPreferredOutputPortNames(["loopback:playback_\(port)"])
        try session.setPreferredOutputNumberOfChannels(1)
        session.setRenderBlock { cycle in cycle.outputs[0].update(repeating: 0.25, count: cycle.frameCount) }
        return session
    }

    /// Listing 3-2 of the later guide reads the interruption this way:
    /// `let typeValue = info[AVAudioSessionInterruptionTypeKey] as? UInt,
    ///  let type = AVAudioSessionInterruptionType(rawValue: typeValue)`, and on
    /// `.ended`: `userInfo[AVAudioSessionInterruptionOptionKey] as? UInt`.
    /// The Class Reference: "AVAudioSessionInterruptionTypeBegan = 1,
    /// AVAudioSessionInterruptionTypeEnded = 0", and "If the interruption type
    /// is AVAudioSessionInterruptionTypeEnded, this dictionary also contains
    /// the AVAudioSessionInterruptionOptionKey key."
    func testAnInterruptionReadsAsTheSeedsReadIt() throws {
        let server = try startServer(period: 256)
        let music = try player("music", server, port: 1)
        defer { music.close() }
        let podcast = try player("podcast", server, port: 2)
        defer { podcast.close() }
        let toMusic = Received(AudioSessionNotification.interruption, object: music)
        let toPodcast = Received(AudioSessionNotification.interruption, object: podcast)
        try music.setActive(true)
        try podcast.setActive(true)
        XCTAssertTrue(waitUntil { toMusic.userInfos.count == 1 }, "\(toMusic.userInfos)")
        let began = try XCTUnwrap(toMusic.userInfos.first)
        let typeValue = try XCTUnwrap(began[AudioSessionNotification.interruptionTypeKey] as? UInt, "\(began)")
        XCTAssertEqual(typeValue, 1, "AVAudioSessionInterruptionTypeBegan = 1")
        XCTAssertEqual(InterruptionType(rawValue: typeValue), .began)
        XCTAssertNil(began[AudioSessionNotification.interruptionOptionKey], "the option key comes with the end only")

        try podcast.setActive(false, options: .notifyOthersOnDeactivation)
        XCTAssertTrue(waitUntil(timeout: 5) { toMusic.userInfos.count == 2 }, "\(toMusic.userInfos)")
        let ended = toMusic.userInfos[1]
        let endedValue = try XCTUnwrap(ended[AudioSessionNotification.interruptionTypeKey] as? UInt, "\(ended)")
        XCTAssertEqual(InterruptionType(rawValue: endedValue), .ended)
        XCTAssertEqual(endedValue, 0, "AVAudioSessionInterruptionTypeEnded = 0")
        let optionsValue = try XCTUnwrap(ended[AudioSessionNotification.interruptionOptionKey] as? UInt, "\(ended)")
        XCTAssertTrue(InterruptionOptions(rawValue: optionsValue).contains(.shouldResume))
        XCTAssertTrue(toPodcast.userInfos.isEmpty, "the other session's notifications are not this one's: \(toPodcast.userInfos)")
    }

    /// "let reasonValue = userInfo[AVAudioSessionRouteChangeReasonKey] as? UInt,
    ///  let reason = AVAudioSessionRouteChangeReason(rawValue:reasonValue)", and
    /// on oldDeviceUnavailable "userInfo[AVAudioSessionRouteChangePreviousRouteKey]
    /// as? AVAudioSessionRouteDescription" (the later guide, Listing 4-3).
    func testARouteChangeReadsAsTheSeedsReadIt() throws {
        let server = try startServer(period: 256)
        let session = AudioSession(clientName: "listener", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback)
        // Observed before activation: the first activation's categoryChange is delivered
        // asynchronously, and may arrive after setActive returns.
        let changes = Received(AudioSessionNotification.routeChange, object: session)
        try session.setActive(true)
        XCTAssertTrue(waitUntil { changes.userInfos.count == 1 }, "\(changes.userInfos)")
        let headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        XCTAssertTrue(waitUntil { changes.userInfos.count == 2 }, "\(changes.userInfos)")
        headphones.unplug()
        XCTAssertTrue(waitUntil { changes.userInfos.count == 3 }, "\(changes.userInfos)")
        let reasons = changes.userInfos.compactMap { ($0[AudioSessionNotification.routeChangeReasonKey] as? UInt) }
            .compactMap(RouteChangeReason.init(rawValue:))
        XCTAssertEqual(reasons, [.categoryChange, .newDeviceAvailable, .oldDeviceUnavailable])
        let previous = try XCTUnwrap(changes.userInfos[2][AudioSessionNotification.routeChangePreviousRouteKey]
            as? RouteDescription)
        XCTAssertTrue(previous.outputs.contains { $0.portType == .headphones }, "\(previous)")
    }

    /// "let typeValue = userInfo[AVAudioSessionSilenceSecondaryAudioHintTypeKey] as? UInt,
    ///  let type = AVAudioSessionSilenceSecondaryAudioHintType(rawValue: typeValue)"
    /// and "This notification is sent only to registered listeners who are
    /// currently in the foreground and have an active audio session" (the
    /// later guide, "Checking Whether Other Audio Is Playing"): an inactive
    /// session hears nothing; once active, it is told at once.
    func testTheSecondaryAudioHintReadsAsTheSeedsReadItAndOnlyActiveSessionsGetIt() throws {
        let server = try startServer(period: 256)
        let game = try player("game", server, port: 1, category: .ambient)
        defer { game.close() }
        try game.open()
        let hints = Received(AudioSessionNotification.silenceSecondaryAudioHint, object: game)
        let music = try player("music", server, port: 2)
        defer { music.close() }
        let seen = game.arbitrationsCompleted
        try music.setActive(true)
        // Two whole arbitrations of the game after the music activated: an inactive session would have heard by then.
        XCTAssertTrue(waitUntil(timeout: 10) { game.arbitrationsCompleted >= seen + 2 })
        XCTAssertTrue(game.secondaryAudioShouldBeSilencedHint, "the property answers an inactive session too")
        XCTAssertTrue(hints.userInfos.isEmpty, "an inactive session was sent the hint: \(hints.userInfos)")
        try game.setActive(true)
        XCTAssertTrue(waitUntil(timeout: 3) { hints.userInfos.count == 1 }, "\(hints.userInfos)")
        let begin = try XCTUnwrap(hints.userInfos.first?[AudioSessionNotification.silenceSecondaryAudioHintTypeKey] as? UInt)
        XCTAssertEqual(SilenceSecondaryAudioHintType(rawValue: begin), .begin)
        try music.setActive(false)
        XCTAssertTrue(waitUntil(timeout: 3) { hints.userInfos.count == 2 }, "\(hints.userInfos)")
        let end = try XCTUnwrap(hints.userInfos[1][AudioSessionNotification.silenceSecondaryAudioHintTypeKey] as? UInt)
        XCTAssertEqual(SilenceSecondaryAudioHintType(rawValue: end), .end)
    }

    /// "AVAudioSessionMediaServicesWereResetNotification ... This notification
    /// has no userInfo dictionary" (Class Reference): what we add is under
    /// our own keys only, and code that looks for AVAudioSession's keys finds none.
    func testWhatALossAndAResetCarryIsUnderOurOwnKeys() throws {
        let server = try startServer(period: 256)
        let session = AudioSession(clientName: "survivor", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback)
        let lost = Received(AudioSessionNotification.mediaServicesWereLost, object: session)
        let reset = Received(AudioSessionNotification.mediaServicesWereReset, object: session)
        try session.setActive(true)
        server.kill()
        XCTAssertTrue(waitUntil { lost.userInfos.count == 1 })
        _ = try startServer(name: server.name, period: 256)
        XCTAssertTrue(waitUntil(timeout: 10) { reset.userInfos.count == 1 })
        for info in lost.userInfos + reset.userInfos {
            for key in info.keys {
                XCTAssertTrue("\(key)".hasPrefix("JackAudioSession"), "a key of AVAudioSession's, or unprefixed: \(key)")
            }
        }
        let what = try XCTUnwrap(reset.userInfos.first?[AudioSessionNotification.mediaServicesResetKey] as? MediaServicesReset)
        XCTAssertTrue(what.reactivated)
        XCTAssertNotNil(lost.userInfos.first?[AudioSessionNotification.mediaServicesLostReasonKey] as? String)
    }

    /// "Posted on the main thread when an audio interruption occurs" (Class
    /// Reference). An app that runs the main queue chooses it and gets its
    /// observers called there; the default, for headless tools without a main
    /// loop, is a queue of the session's own, never the main thread.
    func testObserversRunOnTheQueueTheAppChose() throws {
        let server = try startServer(period: 256)
        let onMain = AudioSession(clientName: "app", serverName: server.name, notificationQueue: .main)
        defer { onMain.close() }
        let headless = AudioSession(clientName: "tool", serverName: server.name)
        defer { headless.close() }
        let mainChanges = Received(AudioSessionNotification.routeChange, object: onMain)
        let toolChanges = Received(AudioSessionNotification.routeChange, object: headless)
        for session in [onMain, headless] {
            try session.setCategory(.playback, options: .mixWithOthers)
            try session.setActive(true)
        }
        // This test runs on the main thread: the main queue is served while it waits in the run loop.
        let deadline = ContinuousClock.now + .seconds(5)
        while mainChanges.userInfos.isEmpty || toolChanges.userInfos.isEmpty, ContinuousClock.now < deadline {
            RunLoop.main.run(until: Date().addingTimeInterval(0.01))
        }
        XCTAssertEqual(mainChanges.onMainThread, [true], "the app chose the main queue")
        XCTAssertEqual(toolChanges.onMainThread, [false], "the default is the session's own queue")
    }
}
