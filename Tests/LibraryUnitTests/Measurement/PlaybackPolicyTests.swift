import JackAudioSession
import Measurement
import XCTest

/// What a player does with its session's events, decided without a server:
/// the seeds' playback app pauses on an interruption, resumes only when told
/// it should, and pauses (staying active) when its device goes away.
final class PlaybackPolicyTests: XCTestCase {
    func testThePlayerFollowsTheSeedsPlaybackApp() {
        let policy = PlaybackPolicy(category: .playback)
        XCTAssertEqual(policy.action(for: .interruption(type: .began, options: [], reason: .default)), .pause)
        XCTAssertEqual(policy.action(for: .interruption(type: .ended, options: .shouldResume, reason: .default)), .resume)
        XCTAssertEqual(policy.action(for: .interruption(type: .ended, options: [], reason: .default)), .stayPaused)
        let unplugged = AudioSessionEvent.routeChange(reason: .oldDeviceUnavailable, previousRoute: .empty,
                                                      currentRoute: .empty, streams: [])
        XCTAssertEqual(policy.action(for: unplugged), .pauseForDeviceLoss)
        XCTAssertNil(policy.action(for: .routeChange(reason: .newDeviceAvailable, previousRoute: .empty,
                                                     currentRoute: .empty, streams: [])))
        XCTAssertNil(policy.action(for: .mediaServicesWereLost(reason: "gone")), "a reset reactivates by itself")
        XCTAssertNil(PlaybackPolicy(category: .multiRoute).action(for: unplugged),
                     "a multiRoute player keeps its other streams playing")
    }
}
