@testable import JackAudioSession
import Foundation
import JackRuntime
import JackTestSupport
import XCTest

/// How often a session looks at its output level follows who can read its
/// `sounding`: one cycle in 1024 frames while it is alone on its server,
/// every cycle while another session is registered there (here another
/// process's `jas play`), never in measurement mode.
final class LevelWatchSessionTests: JackTestCase {
    func processor(_ session: AudioSession) -> RealtimeProcessor? {
        session.core.sync { $0.activation.processor }
    }

    func levelWatch(_ session: AudioSession) -> LevelWatch? { processor(session)?.outputStage.levelWatch }

    /// The cycles whose sound the stage saw, read `count` times, each after at least nine more cycles.
    func lastAudibleCycles(_ processor: RealtimeProcessor, count: Int) -> [UInt64] {
        var cycles: [UInt64] = []
        for _ in 0..<count {
            let done = processor.cyclesCompleted
            guard waitUntil({ processor.cyclesCompleted > done + 9 }) else {
                XCTFail("the session's cycles stopped at \(done)")
                break
            }
            cycles.append(processor.outputStage.lastAudibleCycle)
        }
        return cycles
    }

    func testALoneSessionSamplesItsLevelAndAnotherSessionMakesItWatchEveryCycle() throws {
        let server = try startServer(period: 128)
        let sound = SoundSwitch()
        let music = AudioSession(clientName: "music", serverName: server.name)
        defer { music.close() }
        try music.setCategory(.playback)
        music.setPreferredOutputPortNames(["loopback:playback_1"])
        music.setRenderBlock(sound.renderBlock)
        try music.setActive(true)
        let processor = try XCTUnwrap(processor(music))
        let lone = LevelWatch.sampled(frames: 1024)
        XCTAssertTrue(waitUntil { self.levelWatch(music) == lone }, "alone: \(String(describing: levelWatch(music)))")

        // A steady sound is seen on one cycle in eight (1024 frames of 128), always in the same phase.
        let sampled = lastAudibleCycles(processor, count: 12)
        XCTAssertEqual(Set(sampled.map { $0 % 8 }).count, 1, "looks not 8 cycles apart: \(sampled)")
        XCTAssertGreaterThan(Set(sampled).count, 6, "the looks stopped: \(sampled)")

        let player = try InterruptionTests.Player(jas: jas, server: server.name, name: "radio",
                                                  port: "loopback:playback_2", arguments: ["--mix"])
        XCTAssertTrue(waitUntil { player.started }, "jas play did not start")
        XCTAssertTrue(waitUntil { self.levelWatch(music) == .everyCycle },
                      "another session registered: \(String(describing: levelWatch(music)))")
        let exact = lastAudibleCycles(processor, count: 12)
        XCTAssertGreaterThan(Set(exact.map { $0 % 8 }).count, 1, "still sampled with another session there: \(exact)")

        player.process.terminate()
        player.process.waitUntilExit()
        XCTAssertTrue(waitUntil { self.levelWatch(music) == lone },
                      "alone again: \(String(describing: levelWatch(music)))")
    }

    func testAMeasurementSessionIsNeverWatchedAndMakesTheOthersWatchEveryCycle() throws {
        let server = try startServer(period: 128)
        let music = AudioSession(clientName: "music", serverName: server.name)
        defer { music.close() }
        try music.setCategory(.playback)
        try music.setActive(true)
        XCTAssertTrue(waitUntil { self.levelWatch(music) == .sampled(frames: 1024) })
        let meter = AudioSession(clientName: "meter", serverName: server.name)
        defer { meter.close() }
        try meter.setCategory(.playAndRecord, mode: .measurement, options: .mixWithOthers)
        try meter.setActive(true)
        XCTAssertEqual(levelWatch(meter), .off)
        XCTAssertTrue(waitUntil { self.levelWatch(music) == .everyCycle })
        XCTAssertEqual(levelWatch(meter), .off, "a measurement path is never read")
    }
}
