@testable import JackAudioSession
import Foundation
import JackTestSupport
import XCTest

/// The session's lifecycle on its own: no jackd, no queue, no clock. Each
/// named test is an order of events that a session meets in the field; the
/// last one drives the machine through many thousands of random orders and
/// checks what must always hold.
final class SessionMachineTests: XCTestCase {
    typealias Machine = SessionMachine
    let t0 = ContinuousClock.now
    let before = ServerFormat(sampleRate: 48000, period: 256)
    let after = ServerFormat(sampleRate: 44100, period: 512)

    func other(_ uuid: UInt64, order: UInt64 = 1, active: Bool = true, resumeOthers: Bool = false,
               priority: AudioSession.Priority = .ordinary) -> PublishedSession {
        PublishedSession(uuid: uuid, state: SessionState(
            server: "s", client: "other\(uuid)", pid: 1, category: .playback, mode: .default, options: [],
            active: active, priority: priority, order: order, interrupted: false, interruptedBy: nil,
            producingSound: true, ducking: false, ducked: false, duckLevelDB: -20, resumeOthers: resumeOthers))
    }

    /// An active machine (activated once by the app).
    func active() -> Machine {
        var machine = Machine()
        let attempt = machine.activationRequested()!
        _ = machine.activationSucceeded(attempt.number, server: before, at: t0)
        return machine
    }

    func resets(_ effects: [Machine.Effect]?) -> [MediaServicesReset] {
        (effects ?? []).compactMap { if case let .post(.mediaServicesWereReset(reset)) = $0 { reset } else { nil } }
    }

    func lossOf(_ effects: [Machine.Effect]?) -> Machine.Loss? {
        (effects ?? []).lazy.compactMap { if case let .reconnect(loss) = $0 { loss } else { nil } }.first
    }

    func testTheFirstActivationPostsItsRouteAndALaterOneDoesNot() {
        var machine = Machine()
        XCTAssertEqual(machine.phase, .closed)
        let first = try! XCTUnwrap(machine.activationRequested())
        XCTAssertFalse(machine.publishesActive)
        machine.announced(first.number, order: 1, at: t0)
        XCTAssertTrue(machine.publishesActive, "announced: published as active before its audio flows")
        XCTAssertFalse(machine.isActive)
        XCTAssertEqual(machine.activationSucceeded(first.number, server: before, at: t0), [.postFirstRoute])
        XCTAssertTrue(machine.isActive)
        XCTAssertNil(machine.activationRequested(), "active already: nothing to do")
        XCTAssertEqual(machine.deactivationRequested(audioObjectRunning: false), .deactivate)
        machine.deactivated()
        XCTAssertEqual(machine.phase, .idle)
        let second = try! XCTUnwrap(machine.activationRequested())
        XCTAssertEqual(machine.activationSucceeded(second.number, server: before, at: t0), [])
        machine.close()
        let afterClose = try! XCTUnwrap(machine.activationRequested())
        XCTAssertEqual(machine.activationSucceeded(afterClose.number, server: before, at: t0), [.postFirstRoute],
                       "a closed session starts afresh")
    }

    func testADeactivationIsRefusedWhileAnAudioObjectRuns() {
        var machine = Machine()
        XCTAssertEqual(machine.deactivationRequested(audioObjectRunning: true), .nothing, "not active")
        machine = active()
        XCTAssertEqual(machine.deactivationRequested(audioObjectRunning: true), .refuseBusy)
        XCTAssertTrue(machine.isActive, "a refusal leaves it active")
        XCTAssertEqual(machine.deactivationRequested(audioObjectRunning: false), .deactivate)
        machine.deactivated()
        XCTAssertEqual(machine.deactivationRequested(audioObjectRunning: false), .nothing)
    }

    func testACategoryChangeWhileActiveRebuildsThePortsWhateverRuns() throws {
        var machine = Machine()
        XCTAssertEqual(machine.categoryChanged(), .applyAtActivation, "closed: at the next activation")
        machine = active()
        guard case let .rebuild(attempt) = machine.categoryChanged() else { return XCTFail("active: rebuilt at once") }
        XCTAssertEqual(attempt.fallback, .idle, "a failed rebuild leaves the client open and the session inactive")
        XCTAssertNil(attempt.reset)
        XCTAssertEqual(machine.attempt, attempt)
        XCTAssertEqual(machine.categoryChanged(), .applyAtActivation, "while it rebuilds: the rebuild takes the newest")
        XCTAssertEqual(machine.activationSucceeded(attempt.number, server: before, at: t0), [],
                       "its route change is the category's, not a first route")
        XCTAssertTrue(machine.isActive)

        machine.deactivated()
        XCTAssertEqual(machine.categoryChanged(), .applyAtActivation, "inactive")
        XCTAssertEqual(machine.phase, .idle)
        var interrupted = active()
        let call = other(7, priority: .call)
        _ = interrupted.othersPublished(interrupter: call, all: [call])
        XCTAssertEqual(interrupted.categoryChanged(), .applyAtActivation)
        XCTAssertEqual(interrupted.phase, .interrupted(by: call), "an interruption waits on as it was")
    }

    func testAnAttemptOvertakenWhileItWaitedSaysByWhat() throws {
        var machine = Machine()
        let first = try XCTUnwrap(machine.activationRequested())
        XCTAssertNil(machine.overtaken(first.number), "still the session's")
        machine.close()
        XCTAssertEqual(machine.overtaken(first.number), .closed)
        let second = try XCTUnwrap(machine.activationRequested())
        _ = machine.clientOpened(server: before, at: t0)
        _ = machine.serverLost(reason: "gone", lastSeen: before, at: t0)
        XCTAssertEqual(machine.overtaken(second.number), .serverGone)
    }

    func testDuckedAndTheSecondaryAudioHintHoldOnlyWhileActive() {
        var machine = Machine()
        XCTAssertEqual(machine.arbitrated(duckGain: 0.1, hintWanted: true), [], "inactive: the hint is not said")
        XCTAssertFalse(machine.ducked)
        XCTAssertFalse(machine.secondaryHint)
        machine = active()
        XCTAssertEqual(machine.arbitrated(duckGain: 0.1, hintWanted: true), [.post(.silenceSecondaryAudioHint(begin: true))])
        XCTAssertTrue(machine.ducked)
        XCTAssertEqual(machine.arbitrated(duckGain: 0.1, hintWanted: true), [], "said once")
        XCTAssertEqual(machine.arbitrated(duckGain: 1, hintWanted: false), [.post(.silenceSecondaryAudioHint(begin: false))])
        XCTAssertFalse(machine.ducked)
        XCTAssertEqual(machine.arbitrated(duckGain: 0.5, hintWanted: true).count, 1)
        machine.deactivated()
        XCTAssertFalse(machine.ducked, "a deactivated session is not ducked")
        XCTAssertEqual(machine.arbitrated(duckGain: 0.5, hintWanted: true), [], "the hint goes off in silence")
        XCTAssertFalse(machine.secondaryHint)
        let again = machine.activationRequested()!
        _ = machine.activationSucceeded(again.number, server: before, at: t0)
        XCTAssertEqual(machine.arbitrated(duckGain: 1, hintWanted: true), [.post(.silenceSecondaryAudioHint(begin: true))],
                       "on again, said, once active")
        let call = other(9, priority: .call)
        _ = machine.arbitrated(duckGain: 0.5, hintWanted: true)
        XCTAssertTrue(machine.ducked)
        _ = machine.othersPublished(interrupter: call, all: [call])
        XCTAssertFalse(machine.ducked, "an interrupted session is silent, not ducked")
    }

    func testTheOthersAreWatchedFromTheFirstClientUntilTheSessionCloses() throws {
        var machine = Machine()
        let attempt = try XCTUnwrap(machine.activationRequested())
        XCTAssertFalse(machine.watchesOthers, "no client yet")
        _ = machine.activationFailed(attempt.number, clientOpen: false, server: nil, at: t0)
        XCTAssertFalse(machine.watchesOthers, "a failure that reached no client")
        _ = machine.activationRequested()
        _ = machine.clientOpened(server: before, at: t0)
        XCTAssertTrue(machine.watchesOthers)
        let loss = try XCTUnwrap(lossOf(machine.serverLost(reason: "gone", lastSeen: before, at: t0)))
        XCTAssertTrue(machine.watchesOthers, "through a loss")
        _ = machine.libraryWedged("stuck")
        XCTAssertTrue(machine.watchesOthers, "and a wedged libjack")
        XCTAssertEqual(machine.reconnected(for: loss, server: after, automatic: true, at: t0), .refuse)
        XCTAssertFalse(machine.awaitsReconnect(for: loss), "wedged: nothing reconnects")
        machine.close()
        XCTAssertFalse(machine.watchesOthers)
    }

    func testARouteRefreshDuringAnActivationWaitsForItsSuccess() {
        var machine = Machine()
        XCTAssertTrue(machine.routeRefreshRequested(), "no activation under way: read the devices now")
        let first = machine.activationRequested()!
        XCTAssertFalse(machine.routeRefreshRequested(), "its route is planned: put off")
        XCTAssertFalse(machine.routeRefreshRequested(), "asked twice, done once")
        XCTAssertEqual(machine.activationFailed(first.number, clientOpen: true, server: before, at: t0), [])
        XCTAssertTrue(machine.routeRefreshDeferred, "a failed activation leaves it put off")
        let second = machine.activationRequested()!
        XCTAssertEqual(machine.activationSucceeded(second.number, server: before, at: t0), [.postFirstRoute, .refreshRoute])
        XCTAssertFalse(machine.routeRefreshDeferred)
        machine.deactivated()
        let third = machine.activationRequested()!
        XCTAssertEqual(machine.activationSucceeded(third.number, server: before, at: t0), [], "nothing put off this time")
        XCTAssertTrue(machine.routeRefreshRequested())
    }

    func testAFailedAnnouncedActivationIsWithdrawnAndLeavesTheSessionIdle() {
        var machine = Machine()
        let attempt = machine.activationRequested()!
        machine.announced(attempt.number, order: 1, at: t0)
        XCTAssertEqual(machine.activationFailed(attempt.number, clientOpen: true, server: before, at: t0),
                       [.withdrawAnnouncement])
        XCTAssertEqual(machine.phase, .idle)
        let unreached = machine.activationRequested()!
        machine.close()
        XCTAssertEqual(machine.activationFailed(unreached.number, clientOpen: false, server: nil, at: t0), [],
                       "the word of an attempt a close overtook changes nothing")
        XCTAssertEqual(machine.phase, .closed)
    }

    func testALossIsAnsweredByOneResetThatReactivatesUnderTheAutomaticPolicy() throws {
        var machine = active()
        let lost = machine.serverLost(reason: "gone", lastSeen: before, at: t0)
        XCTAssertEqual(lost?.first, .post(.mediaServicesWereLost(reason: "gone")))
        let loss = try XCTUnwrap(lossOf(lost))
        XCTAssertTrue(loss.wasActive)
        XCTAssertFalse(machine.isActive)
        XCTAssertNil(machine.serverLost(reason: "again", lastSeen: before, at: t0), "no client: nothing more to lose")
        XCTAssertTrue(machine.awaitsReconnect(for: loss))
        guard case let .reactivate(attempt) = machine.reconnected(for: loss, server: after, automatic: true,
                                                                  at: t0 + .seconds(2)) else {
            return XCTFail("an active session is reactivated")
        }
        let effects = machine.activationSucceeded(attempt.number, server: after, at: t0 + .seconds(2.5))
        let reset = try XCTUnwrap(resets(effects).first)
        XCTAssertEqual(resets(effects).count, 1)
        XCTAssertFalse(effects!.contains(.postFirstRoute), "a reset is no first activation")
        XCTAssertEqual(reset, MediaServicesReset(previousSampleRate: 48000, sampleRate: 44100, previousIOBufferFrames: 256,
                                                 ioBufferFrames: 512, reactivated: true, downtime: 2.5))
        XCTAssertTrue(machine.isActive)
        XCTAssertEqual(machine.reconnected(for: loss, server: after, automatic: true, at: t0 + .seconds(3)), .refuse)
    }

    func testUnderTheManualPolicyTheResetLeavesActivationToTheApp() throws {
        var machine = active()
        let loss = try XCTUnwrap(lossOf(machine.serverLost(reason: "gone", lastSeen: before, at: t0)))
        guard case let .install(effects) = machine.reconnected(for: loss, server: after, automatic: false, at: t0 + .seconds(1)) else {
            return XCTFail("installed inactive")
        }
        XCTAssertEqual(resets(effects).map(\.reactivated), [false])
        XCTAssertEqual(machine.phase, .idle)
    }

    /// The race the reconnect generation exists for: a reconnect that opened
    /// its client for an older loss, after a close or a second loss.
    func testAReconnectForAnOlderLossOrAfterACloseIsRefused() throws {
        var machine = active()
        let first = try XCTUnwrap(lossOf(machine.serverLost(reason: "1", lastSeen: before, at: t0)))
        _ = machine.clientOpened(server: after, at: t0 + .seconds(1))
        let second = try XCTUnwrap(lossOf(machine.serverLost(reason: "2", lastSeen: after, at: t0 + .seconds(2))))
        XCTAssertGreaterThan(second.generation, first.generation)
        XCTAssertEqual(machine.reconnected(for: first, server: after, automatic: true, at: t0 + .seconds(3)), .refuse)
        machine.close()
        XCTAssertEqual(machine.reconnected(for: second, server: after, automatic: true, at: t0 + .seconds(3)), .refuse)
        XCTAssertEqual(machine.phase, .closed)
    }

    /// A server that goes while an activation is under way (possible once
    /// the activation waits off the queue): the activation's late word is
    /// ignored, and the loss is answered as one.
    func testALossDuringAnActivationOvertakesIt() throws {
        var machine = Machine()
        _ = machine.clientOpened(server: before, at: t0)
        let attempt = try XCTUnwrap(machine.activationRequested())
        machine.announced(attempt.number, order: 1, at: t0)
        let loss = try XCTUnwrap(lossOf(machine.serverLost(reason: "gone", lastSeen: before, at: t0)))
        XCTAssertFalse(loss.wasActive, "it never became active")
        XCTAssertNil(machine.activationSucceeded(attempt.number, server: before, at: t0))
        XCTAssertEqual(machine.activationFailed(attempt.number, clientOpen: false, server: nil, at: t0), [])
        XCTAssertEqual(machine.pendingLoss, loss)
        guard case .install = machine.reconnected(for: loss, server: after, automatic: true, at: t0 + .seconds(1)) else {
            return XCTFail("the loss is still answered")
        }
    }

    /// The first activation opens the client, and the server goes while the
    /// activation waits for JACK off the queue: that is a loss, reconnected,
    /// not a shutdown dropped because the session had no client before.
    func testALossAfterTheFirstActivationOpenedItsClientIsALoss() throws {
        var machine = Machine()
        let attempt = try XCTUnwrap(machine.activationRequested())
        XCTAssertTrue(machine.openNeedsClient)
        XCTAssertEqual(machine.clientOpened(server: before, at: t0), [])
        XCTAssertFalse(machine.openNeedsClient, "the attempt holds the client now")
        let loss = try XCTUnwrap(lossOf(machine.serverLost(reason: "gone", lastSeen: before, at: t0)))
        XCTAssertNil(machine.activationSucceeded(attempt.number, server: before, at: t0), "overtaken")
        XCTAssertEqual(machine.pendingLoss, loss)
    }

    /// A reset's reactivation that fails (the server went again mid-rebuild) waits for the server again.
    func testAFailedReactivationWaitsForTheServerAgain() throws {
        var machine = active()
        let loss = try XCTUnwrap(lossOf(machine.serverLost(reason: "gone", lastSeen: before, at: t0)))
        guard case let .reactivate(attempt) = machine.reconnected(for: loss, server: after, automatic: true, at: t0) else {
            return XCTFail("reactivates")
        }
        XCTAssertEqual(machine.activationFailed(attempt.number, clientOpen: true, server: after, at: t0), [])
        XCTAssertEqual(machine.pendingLoss, loss)
        XCTAssertEqual(machine.generation, loss.generation, "the same reconnect goes on")
        guard case .reactivate = machine.reconnected(for: loss, server: after, automatic: true, at: t0) else {
            return XCTFail("the next attempt reactivates")
        }
    }

    /// The app activates while the reconnect is still trying, and reaches the server first.
    func testTheAppReachingTheReturnedServerFirstSaysTheResetAndStopsTheReconnect() throws {
        var machine = active()
        let loss = try XCTUnwrap(lossOf(machine.serverLost(reason: "gone", lastSeen: before, at: t0)))
        let attempt = try XCTUnwrap(machine.activationRequested())
        XCTAssertEqual(machine.clientOpened(server: after, at: t0), [], "said once the activation ends")
        let effects = machine.activationSucceeded(attempt.number, server: after, at: t0 + .seconds(1))
        XCTAssertEqual(resets(effects).map(\.reactivated), [true])
        XCTAssertGreaterThan(machine.generation, loss.generation, "the reconnect thread stops")
        XCTAssertEqual(machine.reconnected(for: loss, server: after, automatic: true, at: t0 + .seconds(1)), .refuse)

        // Reached, but the activation failed: the reset is said, not reactivated.
        var failing = active()
        let loss2 = try XCTUnwrap(lossOf(failing.serverLost(reason: "gone", lastSeen: before, at: t0)))
        let attempt2 = try XCTUnwrap(failing.activationRequested())
        XCTAssertEqual(resets(failing.activationFailed(attempt2.number, clientOpen: true, server: after, at: t0))
            .map(\.reactivated), [false])
        XCTAssertEqual(failing.phase, .idle)
        XCTAssertEqual(failing.reconnected(for: loss2, server: after, automatic: true, at: t0), .refuse)

        // Not reached (the server is still away): still lost, the reconnect goes on.
        var unreached = active()
        let loss3 = try XCTUnwrap(lossOf(unreached.serverLost(reason: "gone", lastSeen: before, at: t0)))
        let attempt3 = try XCTUnwrap(unreached.activationRequested())
        XCTAssertEqual(unreached.activationFailed(attempt3.number, clientOpen: false, server: nil, at: t0), [])
        XCTAssertEqual(unreached.pendingLoss, loss3)
    }

    func testAnInterruptionBeginsOnlyWhileActiveAndEndsWhenTheInterrupterGoes() {
        var machine = Machine()
        let call = other(7, priority: .call)
        _ = machine.clientOpened(server: before, at: t0)
        XCTAssertEqual(machine.othersPublished(interrupter: call, all: [call]), [], "an idle session is not interrupted")
        machine = active()
        XCTAssertEqual(machine.othersPublished(interrupter: call, all: [call]),
                       [.silenceForInterruption, .post(.interruption(type: .began, options: [], reason: .callStarted))],
                       "silenced before the interruption is said")
        XCTAssertEqual(machine.interrupter, call)
        XCTAssertFalse(machine.isActive)
        XCTAssertEqual(machine.othersPublished(interrupter: nil, all: [call]), [], "the call goes on")
        XCTAssertEqual(machine.othersPublished(interrupter: nil, all: []),
                       [.post(.interruption(type: .ended, options: .shouldResume, reason: .default))], "gone: resume")
        XCTAssertEqual(machine.phase, .idle)

        for (now, options) in [(other(7, active: false), InterruptionOptions()),
                               (other(7, active: false, resumeOthers: true), .shouldResume),
                               (other(7, order: 2), InterruptionOptions())] {
            var machine = active()
            _ = machine.othersPublished(interrupter: other(7), all: [other(7)])
            XCTAssertEqual(machine.othersPublished(interrupter: nil, all: [now]),
                           [.post(.interruption(type: .ended, options: options, reason: .default))])
        }
    }

    /// An interrupted session whose app tries to activate during the call
    /// (refused before it was announced) still waits for the call's end.
    func testARefusedActivationDuringAnInterruptionKeepsWaitingForItsEnd() throws {
        var machine = active()
        let call = other(7, priority: .call)
        _ = machine.othersPublished(interrupter: call, all: [call])
        let attempt = try XCTUnwrap(machine.activationRequested())
        XCTAssertEqual(machine.activationFailed(attempt.number, clientOpen: true, server: before, at: t0), [])
        XCTAssertEqual(machine.interrupter, call)
        XCTAssertEqual(machine.othersPublished(interrupter: nil, all: []),
                       [.post(.interruption(type: .ended, options: .shouldResume, reason: .default))])
    }

    /// The server restarts while the session is interrupted: the
    /// interruption is still there when it comes back, and ends by the arbitration.
    func testAnInterruptionOutlivesAServerRestart() throws {
        var machine = active()
        let call = other(7, priority: .call)
        _ = machine.othersPublished(interrupter: call, all: [call])
        let loss = try XCTUnwrap(lossOf(machine.serverLost(reason: "gone", lastSeen: before, at: t0)))
        XCTAssertFalse(loss.wasActive)
        XCTAssertEqual(machine.interrupter, call, "still interrupted while the server is away")
        guard case let .install(effects) = machine.reconnected(for: loss, server: after, automatic: true, at: t0) else {
            return XCTFail("an interrupted session is not reactivated by a reset")
        }
        XCTAssertEqual(resets(effects).count, 1)
        XCTAssertEqual(machine.interrupter, call)
        XCTAssertEqual(machine.othersPublished(interrupter: nil, all: []),
                       [.post(.interruption(type: .ended, options: .shouldResume, reason: .default))])
    }

    func testAWedgedLibraryIsSaidOnceAndNothingReconnects() throws {
        var machine = active()
        let loss = try XCTUnwrap(lossOf(machine.serverLost(reason: "gone", lastSeen: before, at: t0)))
        XCTAssertEqual(machine.libraryWedged("close stuck"),
                       [.post(.mediaServicesWereLost(reason: "libjack is wedged: close stuck"))])
        XCTAssertEqual(machine.libraryWedged("close stuck"), [], "said once")
        XCTAssertEqual(machine.reconnected(for: loss, server: after, automatic: true, at: t0), .refuse)
        let attempt = try XCTUnwrap(machine.activationRequested())
        XCTAssertEqual(machine.activationFailed(attempt.number, clientOpen: false, server: nil, at: t0), [])
        XCTAssertEqual(machine.wedgedReason, "close stuck")
    }

    /// Close from every phase a session reaches: closed, and nothing that
    /// was under way before it (a reconnect, an activation) comes back.
    func testCloseEndsEveryPhase() throws {
        var phases: [(String, Machine, Machine.Loss?, Machine.Attempt?)] = []
        var machine = Machine()
        phases.append(("closed", machine, nil, nil))
        _ = machine.clientOpened(server: before, at: t0)
        phases.append(("idle", machine, nil, nil))
        var activating = machine
        let attempt = try XCTUnwrap(activating.activationRequested())
        phases.append(("activating", activating, nil, attempt))
        let activeMachine = active()
        phases.append(("active", activeMachine, nil, nil))
        var interrupted = activeMachine
        _ = interrupted.othersPublished(interrupter: other(3), all: [other(3)])
        phases.append(("interrupted", interrupted, nil, nil))
        var lost = activeMachine
        let loss = try XCTUnwrap(lossOf(lost.serverLost(reason: "x", lastSeen: before, at: t0)))
        phases.append(("lost", lost, loss, nil))
        var reactivating = lost
        guard case let .reactivate(resetAttempt) = reactivating.reconnected(for: loss, server: after, automatic: true,
                                                                           at: t0) else { return XCTFail() }
        phases.append(("reactivating", reactivating, loss, resetAttempt))
        var wedged = lost
        _ = wedged.libraryWedged("stuck")
        phases.append(("wedged", wedged, loss, nil))

        for (name, start, loss, attempt) in phases {
            var machine = start
            let generation = machine.generation
            machine.close()
            XCTAssertEqual(machine.phase, .closed, name)
            XCTAssertGreaterThan(machine.generation, generation, "\(name): a reconnect under way stops")
            if let loss {
                XCTAssertEqual(machine.reconnected(for: loss, server: after, automatic: true, at: t0), .refuse, name)
            }
            if let attempt {
                XCTAssertNil(machine.activationSucceeded(attempt.number, server: after, at: t0), name)
                XCTAssertEqual(machine.phase, .closed, name)
            }
            XCTAssertNil(machine.interrupter, name)
        }
    }

    /// Random orders of every input, many thousands of them: what must hold
    /// whatever the order.
    func testRandomOrdersKeepTheLifecycleConsistent() {
        var generator = seededGenerator()
        let sequences = 5_000
        let started = Date()
        var phasesSeen = Set<String>()
        var violations = 0
        // XCTAssert is slow in a hot loop: a violation is counted, and the first few are said.
        func check(_ holds: Bool, _ what: @autoclosure () -> String) {
            guard !holds else { return }
            violations += 1
            if violations <= 5 { XCTFail(what()) }
        }
        for _ in 0..<sequences {
            var machine = Machine()
            var losses: [Machine.Loss] = []
            var unanswered: Machine.Loss?
            var attempts: [Machine.Attempt] = []
            var refreshPutOff = false
            let others = [other(1), other(2, order: 5), other(3, priority: .call)]
            for _ in 0..<40 {
                let generation = machine.generation
                let wasActivating = machine.attempt != nil
                var effects: [Machine.Effect] = []
                var reactivation: Machine.Attempt?
                switch Int.random(in: 0..<14, using: &generator) {
                case 0: if let attempt = machine.activationRequested() { attempts.append(attempt) }
                case 1:
                    if let attempt = attempts.randomElement(using: &generator) {
                        check((machine.overtaken(attempt.number) == nil) == (machine.attempt?.number == attempt.number),
                              "an attempt said overtaken while it is the session's, or the reverse")
                    }
                    if let attempt = attempts.randomElement(using: &generator),
                       let succeeded = machine.activationSucceeded(attempt.number, server: after, at: t0) {
                        effects = succeeded
                        check(!machine.routeRefreshDeferred, "a refresh still put off after an activation succeeded")
                    }
                case 2:
                    if let attempt = attempts.randomElement(using: &generator) {
                        effects = machine.activationFailed(attempt.number, clientOpen: Bool.random(using: &generator),
                                                           server: after, at: t0)
                    }
                case 3: if machine.deactivationRequested(audioObjectRunning: false) == .deactivate { machine.deactivated() }
                case 4: if machine.openNeedsClient { effects = machine.clientOpened(server: after, at: t0) }
                case 5: effects = machine.serverLost(reason: "lost", lastSeen: before, at: t0) ?? []
                case 6:
                    if let loss = losses.randomElement(using: &generator) {
                        let awaited = machine.awaitsReconnect(for: loss)
                        let answer = machine.reconnected(for: loss, server: after, automatic: Bool.random(using: &generator),
                                                         at: t0)
                        check(awaited == (answer != .refuse), "a reconnect opened for nothing, or refused when awaited")
                        switch answer {
                        case .refuse: break
                        case let .install(installed): effects = installed
                        case let .reactivate(attempt):
                            attempts.append(attempt)
                            reactivation = attempt
                        }
                    }
                case 7: effects = machine.libraryWedged("stuck")
                case 8:
                    let interrupter = Bool.random(using: &generator) ? others.randomElement(using: &generator) : nil
                    let all = others.filter { _ in Bool.random(using: &generator) }
                    effects = machine.othersPublished(interrupter: interrupter, all: all)
                case 9:
                    if let attempt = machine.attempt { machine.announced(attempt.number, order: 1, at: t0) }
                case 10:
                    let now = machine.routeRefreshRequested()
                    check(now == (machine.attempt == nil), "a refresh put off with no activation waiting, or run during one")
                    if !now { refreshPutOff = true }
                case 11:
                    let wasActive = machine.isActive
                    if case let .rebuild(attempt) = machine.categoryChanged() {
                        check(wasActive && machine.attempt == attempt && attempt.fallback == .idle,
                              "a rebuild of a session that was not active, or not under way")
                        attempts.append(attempt)
                    } else {
                        check(!wasActive, "an active session's category change not rebuilt")
                    }
                case 12:
                    let hintBefore = machine.secondaryHint
                    effects = machine.arbitrated(duckGain: Bool.random(using: &generator) ? 0.1 : 1,
                                                 hintWanted: Bool.random(using: &generator))
                    for case let .post(.silenceSecondaryAudioHint(begin)) in effects {
                        check(machine.isActive && begin != hintBefore, "a hint said while inactive, or said twice")
                    }
                    check(machine.isActive || !machine.secondaryHint, "the hint on while inactive")
                default: machine.close()
                }
                check(machine.generation >= generation, "the generation went back")
                for effect in effects {
                    switch effect {
                    case let .reconnect(loss):
                        // One unanswered is replaced only by a loss during an activation that answers it
                        // (a reset's reactivation, or the app's reaching the returned server).
                        check(unanswered == nil || wasActivating, "a loss while another is unanswered")
                        check(loss.generation == machine.generation, "a reconnect of another generation")
                        losses.append(loss)
                        unanswered = loss
                    case .post(.mediaServicesWereReset):
                        check(unanswered != nil, "a reset that answers no loss: \(machine.phase)")
                        unanswered = nil
                    case .post(.mediaServicesWereLost(let reason)) where reason.hasPrefix("libjack is wedged"):
                        unanswered = nil
                    case .refreshRoute:
                        check(refreshPutOff, "a refresh nobody put off")
                        refreshPutOff = false
                    case .silenceForInterruption:
                        check(machine.interrupter != nil && !machine.isActive, "silenced with no interruption begun")
                    default: break
                    }
                }
                check(reactivation == nil || unanswered != nil, "a reactivation for no loss")
                switch machine.phase {
                case .closed, .wedged: unanswered = nil
                case let .lost(loss):
                    check(loss == unanswered, "lost: the loss in hand is not the one unanswered")
                    check(loss.generation == machine.generation, "its reconnect is not the current one")
                default: break
                }
                // The reconnect thread reads only the generation: once its loss is answered (or the
                // session closed or wedged), the generation has moved on, so it stops.
                if let last = losses.last, machine.pendingLoss == nil, machine.attempt?.reset == nil,
                   machine.attempt?.returning == nil {
                    check(machine.generation != last.generation, "a reconnect goes on in \(machine.phase.name)")
                }
                check(machine.isActive == (machine.phase == .active), "isActive and the phase disagree")
                check(!machine.isActive || machine.hasBeenActive, "active and never been active")
                if machine.interrupter != nil {
                    switch machine.phase {
                    case .interrupted, .lost: break
                    default: check(false, "interrupted in \(machine.phase)")
                    }
                }
                phasesSeen.insert(machine.phase.name)
            }
        }
        let seconds = Date().timeIntervalSince(started)
        print("\(sequences) random sequences of 40 inputs in \(String(format: "%.2f", seconds)) s")
        XCTAssertEqual(violations, 0)
        XCTAssertEqual(phasesSeen, ["closed", "idle", "activating", "active", "interrupted", "lost", "wedged"],
                       "every phase reached")
    }
}

private extension SessionMachine.Phase {
    var name: String {
        switch self {
        case .closed: "closed"
        case .idle: "idle"
        case .activating: "activating"
        case .active: "active"
        case .interrupted: "interrupted"
        case .lost: "lost"
        case .wedged: "wedged"
        }
    }
}
