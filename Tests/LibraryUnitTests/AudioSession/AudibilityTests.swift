@testable import JackAudioSession
import JackRuntime
import XCTest

/// What a session tells the others of its sound, decided without a server
/// or a clock: the times come in with the looks, as the driver hands them.
final class AudibilityTests: XCTestCase {
    let t0 = ContinuousClock.now
    let format = ServerFormat(sampleRate: 48000, period: 256)

    /// Heard while the output stage's count of audible cycles moves, and for
    /// `Audibility.hold` seconds after it stops; a measurement path, never
    /// watched, is heard as long as it is active.
    func testSoundIsHeardForTwoSecondsAfterTheLastAudibleCycle() {
        var sound = Audibility()
        sound.activated(order: 7, clockMicroseconds: 99, at: t0)
        XCTAssertTrue(sound.producingSound, "an activation is heard from its start")
        XCTAssertEqual(sound.order, 7)
        XCTAssertFalse(sound.looked(at: .watched(lastAudibleCycle: 5), ducksOthers: false, releaseHold: nil, at: t0 + .seconds(1)))
        XCTAssertFalse(sound.looked(at: .watched(lastAudibleCycle: 5), ducksOthers: false, releaseHold: nil,
                                    at: t0 + .seconds(2.9)), "0.9 s after the cycle last heard")
        XCTAssertTrue(sound.looked(at: .watched(lastAudibleCycle: 5), ducksOthers: false, releaseHold: nil,
                                   at: t0 + .seconds(3.1)), "2.1 s after it: silent")
        XCTAssertFalse(sound.producingSound)
        XCTAssertTrue(sound.looked(at: .watched(lastAudibleCycle: 6), ducksOthers: false, releaseHold: nil, at: t0 + .seconds(10)))
        XCTAssertTrue(sound.producingSound, "a new audible cycle")
        XCTAssertFalse(sound.looked(at: .measurement, ducksOthers: false, releaseHold: nil, at: t0 + .seconds(60)))
        XCTAssertTrue(sound.producingSound, "a measurement path is heard while active")
        XCTAssertTrue(sound.looked(at: .none, ducksOthers: true, releaseHold: nil, at: t0 + .seconds(61)))
        XCTAssertFalse(sound.producingSound || sound.ducking, "no output: neither heard nor ducking")
    }

    /// duckOthers ducks while active; a release hold ends the ducking after
    /// that much silence, and sound starts it again.
    func testDuckingEndsAfterItsReleaseHoldOfSilence() {
        var sound = Audibility()
        sound.activated(order: 1, clockMicroseconds: 0, at: t0)
        sound.looked(at: .watched(lastAudibleCycle: 0), ducksOthers: true, releaseHold: 0.5, at: t0 + .seconds(0.4))
        XCTAssertTrue(sound.ducking)
        XCTAssertTrue(sound.looked(at: .watched(lastAudibleCycle: 0), ducksOthers: true, releaseHold: 0.5, at: t0 + .seconds(0.6)))
        XCTAssertFalse(sound.ducking, "silent beyond the hold")
        XCTAssertTrue(sound.producingSound, "still heard: the hold of sound is 2 s")
        sound.looked(at: .watched(lastAudibleCycle: 1), ducksOthers: true, releaseHold: 0.5, at: t0 + .seconds(5))
        XCTAssertTrue(sound.ducking, "sound again")
        sound.looked(at: .watched(lastAudibleCycle: 1), ducksOthers: true, releaseHold: nil, at: t0 + .seconds(500))
        XCTAssertTrue(sound.ducking, "without a hold, ducking lasts while active")
    }

    /// A reset keeps its place in the order; a session never placed takes
    /// JACK's time; a deactivation says whether the others resume, and a
    /// close waits 0.3 s after it.
    func testOrderResumeAndTheLingerAfterADeactivation() {
        var sound = Audibility()
        sound.activated(order: nil, clockMicroseconds: 42, at: t0)
        XCTAssertEqual(sound.order, 42, "never placed: JACK's time now")
        sound.activated(order: nil, clockMicroseconds: 50, at: t0)
        XCTAssertEqual(sound.order, 42, "a reset keeps its place")
        XCTAssertEqual(sound.lingerRemaining(at: t0), 0, "never deactivated")
        sound.deactivated(notifyingOthers: true, at: t0 + .seconds(1))
        XCTAssertTrue(sound.resumeOthers)
        XCTAssertFalse(sound.producingSound)
        XCTAssertEqual(sound.lingerRemaining(at: t0 + .seconds(1.1)), 0.2, accuracy: 1e-9)
        XCTAssertEqual(sound.lingerRemaining(at: t0 + .seconds(2)), 0)
        sound.announced(order: 60, at: t0 + .seconds(3))
        XCTAssertEqual(sound.order, 60)
        XCTAssertFalse(sound.resumeOthers, "a new activation clears it")
        XCTAssertTrue(sound.producingSound)
    }

    /// The machine feeds it only where it may: an activation under way stays
    /// heard, as announced; inactive is silent; an interruption and a failed
    /// announced activation silence it at once.
    func testTheMachineDecidesWhenTheSoundChanges() throws {
        var machine = SessionMachine()
        _ = machine.clientOpened(server: format, at: t0)
        let attempt = try XCTUnwrap(machine.activationRequested())
        machine.announced(attempt.number, order: 3, at: t0)
        XCTAssertTrue(machine.audibility.producingSound)
        XCTAssertFalse(machine.outputLooked(at: .none, ducksOthers: false, releaseHold: nil, at: t0 + .seconds(9)))
        XCTAssertTrue(machine.audibility.producingSound, "announced, and the activation is under way")
        XCTAssertEqual(machine.activationFailed(attempt.number, clientOpen: true, server: format, at: t0), [.withdrawAnnouncement])
        XCTAssertFalse(machine.audibility.producingSound, "withdrawn")

        let again = try XCTUnwrap(machine.activationRequested())
        _ = machine.activationSucceeded(again.number, server: format, order: 4, clockMicroseconds: 0, at: t0)
        XCTAssertEqual(machine.audibility.order, 4)
        XCTAssertTrue(machine.audibility.producingSound)
        let caller = PublishedSession(uuid: 9, state: SessionState(
            server: "s", client: "call", pid: 1, category: .playAndRecord, mode: .voiceChat, options: [],
            active: true, priority: .call, order: 5, interrupted: false, interruptedBy: nil,
            producingSound: true, ducking: false, ducked: false, duckLevelDB: -20, resumeOthers: false))
        XCTAssertEqual(machine.othersPublished(interrupter: caller, all: [caller]).first, .silenceForInterruption)
        XCTAssertFalse(machine.audibility.producingSound, "silent at once")
        machine.outputLooked(at: .measurement, ducksOthers: true, releaseHold: nil, at: t0 + .seconds(1))
        XCTAssertFalse(machine.audibility.producingSound || machine.audibility.ducking, "inactive: not heard, ducks nothing")
        machine.appDeactivated(notifyingOthers: false, at: t0 + .seconds(2))
        XCTAssertEqual(machine.audibility.lingerRemaining(at: t0 + .seconds(2)), 0.3, accuracy: 1e-9)
    }
}
