@testable import JackAudioSession
import XCTest

/// Whether and what the session asks the server for as its period (no jackd;
/// against real servers: `LatencyTests`, `SeedBehaviourTests`).
final class PeriodRequestTests: XCTestCase {
    func session(_ uuid: UInt64, _ category: Category, options: [String] = [], active: Bool = true) -> PublishedSession {
        PublishedSession(uuid: uuid, state: SessionState(
            server: "s", client: "client\(uuid)", pid: 1, category: category, mode: .default, options: options,
            active: active, priority: .ordinary, order: 1, interrupted: false, interruptedBy: nil,
            producingSound: true, ducking: false, ducked: false, duckLevelDB: -20, resumeOthers: false))
    }

    func testTheNearestPowerOfTwoIsAskedUnlessTheServerRunsIt() {
        XCTAssertEqual(PeriodRequest(duration: 0.005, sampleRate: 48000, runningPeriod: 1024, isMixable: false,
                                     ownUUID: 1, others: { [] }), .ask(frames: 256))
        var reads = 0
        let running = PeriodRequest(duration: 0.005, sampleRate: 48000, runningPeriod: 256, isMixable: true, ownUUID: 1,
                                    others: { reads += 1; return [] })
        XCTAssertEqual(running, .running)
        XCTAssertNil(running.frames)
        XCTAssertEqual(reads, 0, "the registry is not read when nothing would be asked")
    }

    func testAMixableSessionYieldsToAnActiveSessionThatDoesNotMix() {
        let others = [session(1, .playback), session(7, .playAndRecord), session(8, .ambient)]
        let request = PeriodRequest(duration: 0.0027, sampleRate: 48000, runningPeriod: 1024, isMixable: true,
                                    ownUUID: 1, others: { others })
        XCTAssertEqual(request, .yielded(to: "client7"), "its own published state does not count")
        XCTAssertNil(request.frames)
    }

    func testInactiveOrMixingOthersDoNotStopTheRequestNorDoesAnyoneStopANonMixableOne() {
        let quiet = [session(7, .playAndRecord, active: false), session(8, .playback, options: ["mixWithOthers"])]
        XCTAssertEqual(PeriodRequest(duration: 0.0027, sampleRate: 48000, runningPeriod: 1024, isMixable: true,
                                     ownUUID: 1, others: { quiet }), .ask(frames: 128))
        let call = [session(7, .playAndRecord)]
        XCTAssertEqual(PeriodRequest(duration: 0.0027, sampleRate: 48000, runningPeriod: 1024, isMixable: false,
                                     ownUUID: 1, others: { call }), .ask(frames: 128))
    }
}
