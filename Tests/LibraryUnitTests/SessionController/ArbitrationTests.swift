import JackAudioSession
import XCTest

/// The arbitration rules as pure functions of published states: every
/// process must reach the same answer from the same states.
final class ArbitrationTests: XCTestCase {
    func session(_ uuid: UInt64, _ category: Category = .playback, mode: Mode = .default,
                 options: CategoryOptions = [], order: UInt64, priority: AudioSession.Priority = .ordinary,
                 active: Bool = true, ducking: Bool = false, duckLevel: Double = -20,
                 producing: Bool = true) -> PublishedSession {
        PublishedSession(uuid: uuid, state: SessionState(
            server: "s", client: "c\(uuid)", pid: 1, category: category, mode: mode, options: options.names,
            active: active, priority: priority, order: order, interrupted: false, interruptedBy: nil,
            producingSound: producing, ducking: ducking, ducked: false, duckLevelDB: duckLevel, resumeOthers: false))
    }

    func testLaterNonMixableInterruptsEarlierNonMixable() {
        let first = session(1, order: 100)
        let second = session(2, order: 200)
        XCTAssertTrue(Arbitration.interrupts(second, first))
        XCTAssertFalse(Arbitration.interrupts(first, second))
        XCTAssertEqual(Arbitration.interrupter(of: first, among: [second])?.uuid, 2)
        XCTAssertNil(Arbitration.interrupter(of: second, among: [first]))
    }

    func testTiesAreBrokenByUUIDTheSameWayEverywhere() {
        let a = session(7, order: 100)
        let b = session(9, order: 100)
        XCTAssertTrue(Arbitration.interrupts(b, a))
        XCTAssertFalse(Arbitration.interrupts(a, b))
    }

    func testMixableSessionsNeitherInterruptNorAreInterrupted() {
        let ambient = session(1, .ambient, order: 100)
        let mixing = session(2, options: .mixWithOthers, order: 150)
        let ducker = session(4, options: .duckOthers, order: 250)
        let music = session(3, order: 200)
        XCTAssertFalse(Arbitration.interrupts(music, ambient))
        XCTAssertFalse(Arbitration.interrupts(music, mixing))
        XCTAssertFalse(Arbitration.interrupts(ducker, music))
        XCTAssertFalse(Arbitration.interrupts(mixing, ambient))
    }

    /// "The system follows the inviolable rule that 'the phone always wins'"
    /// (guide), and "If another active audio session has higher priority than
    /// yours (for example, a phone call), and neither audio session allows
    /// mixing, attempting to activate your audio session will fail" (Class
    /// Reference, setActive:error:): a call interrupts whatever was active
    /// when it started and every non-mixable session; a mixable session may
    /// activate during the call and plays along with it.
    func testTheCallWinsButAMixableSessionMayStartDuringIt() {
        let earlierAmbient = session(5, .ambient, order: 50)
        let call = session(1, .playAndRecord, mode: .voiceChat, order: 100, priority: .call)
        let laterAmbient = session(2, .ambient, order: 200)
        let laterNonMixable = session(3, order: 300)
        XCTAssertTrue(Arbitration.interrupts(call, earlierAmbient), "active when the call started")
        XCTAssertFalse(Arbitration.interrupts(call, laterAmbient), "mixable, started during the call")
        XCTAssertTrue(Arbitration.interrupts(call, laterNonMixable))
        XCTAssertFalse(Arbitration.interrupts(laterNonMixable, call))
        XCTAssertEqual(Arbitration.blockingCall(for: 3, isMixable: false, among: [call, laterAmbient])?.uuid, 1)
        XCTAssertNil(Arbitration.blockingCall(for: 2, isMixable: true, among: [call]), "a mixable session may activate")
        XCTAssertNil(Arbitration.blockingCall(for: 1, isMixable: false, among: [call]))
        let mixableCall = session(6, .playAndRecord, options: .mixWithOthers, order: 100, priority: .call)
        XCTAssertNil(Arbitration.blockingCall(for: 3, isMixable: false, among: [mixableCall]), "the call allows mixing")
        let secondCall = session(4, order: 400, priority: .call)
        XCTAssertTrue(Arbitration.interrupts(call, secondCall), "the first call holds")
        XCTAssertFalse(Arbitration.interrupts(secondCall, call))
    }

    func testInterruptSpokenAudioOnlyInterruptsSpokenAudio() {
        let podcast = session(1, mode: .spokenAudio, options: .mixWithOthers, order: 100)
        let music = session(2, options: .mixWithOthers, order: 150)
        let prompt = session(3, mode: .spokenAudio, options: .interruptSpokenAudioAndMixWithOthers, order: 200)
        XCTAssertTrue(Arbitration.interrupts(prompt, podcast))
        XCTAssertFalse(Arbitration.interrupts(prompt, music))
    }

    func testInactiveSessionsTakeNoPart() {
        let first = session(1, order: 100)
        let gone = session(2, order: 200, active: false)
        XCTAssertFalse(Arbitration.interrupts(gone, first))
        XCTAssertNil(Arbitration.blockingCall(for: 1, isMixable: false,
                                              among: [session(3, order: 50, priority: .call, active: false)]))
    }

    func testDuckGainIsTheDeepestActiveDuckerAndNeverTouchesMeasurementOrCalls() {
        let music = session(1, order: 100)
        let prompts = [session(2, options: .duckOthers, order: 200, ducking: true, duckLevel: -12),
                       session(3, options: .duckOthers, order: 300, ducking: true, duckLevel: -30),
                       session(4, options: .duckOthers, order: 400, ducking: false, duckLevel: -60)]
        XCTAssertEqual(Arbitration.duckGain(for: music, among: prompts), Float(pow(10, -30.0 / 20)), accuracy: 1e-6)
        XCTAssertEqual(Arbitration.duckGain(for: music, among: []), 1)
        let measuring = session(5, .playAndRecord, mode: .measurement, order: 50)
        XCTAssertEqual(Arbitration.duckGain(for: measuring, among: prompts), 1)
        let call = session(6, .playAndRecord, mode: .voiceChat, order: 60, priority: .call)
        XCTAssertEqual(Arbitration.duckGain(for: call, among: prompts), 1)
    }

    func testOtherAudioAndSecondaryHintComeFromTheOthersState() {
        let me: UInt64 = 1
        let quietMusic = session(2, order: 100, producing: false)
        let ambient = session(3, .ambient, order: 100)
        let music = session(4, order: 100)
        XCTAssertFalse(Arbitration.isOtherAudioPlaying(for: me, among: [quietMusic]))
        XCTAssertTrue(Arbitration.isOtherAudioPlaying(for: me, among: [ambient]))
        XCTAssertFalse(Arbitration.secondaryAudioShouldBeSilenced(for: me, among: [ambient, quietMusic]))
        XCTAssertTrue(Arbitration.secondaryAudioShouldBeSilenced(for: me, among: [music]))
        XCTAssertFalse(Arbitration.secondaryAudioShouldBeSilenced(for: 4, among: [music]), "its own audio is not other")
    }

    func testPublishedValuesAreBoundedAndValidated() {
        let good = session(1, order: 5).state
        XCTAssertEqual(try SessionState.parse(good.encoded()).get(), good)
        let cases: [(String, (SessionState.Refusal) -> Bool)] = [
            ("garbage", { if case .malformed = $0 { true } else { false } }),
            (String(repeating: " ", count: 5000), { if case .tooLong = $0 { true } else { false } }),
            (good.encoded().replacingOccurrences(of: "\"version\":1", with: "\"version\":2"),
             { if case .unsupportedVersion(2) = $0 { true } else { false } }),
            (good.encoded().replacingOccurrences(of: "\"duckLevelDB\":-20", with: "\"duckLevelDB\":40"),
             { if case .outOfRange = $0 { true } else { false } }),
            (good.encoded().replacingOccurrences(of: "\"category\":\"playback\"", with: "\"category\":\"loud\""),
             { if case .malformed = $0 { true } else { false } }),
        ]
        for (text, expected) in cases {
            switch SessionState.parse(text) {
            case .success: XCTFail("accepted \(text.prefix(60))")
            case let .failure(refusal): XCTAssertTrue(expected(refusal), "\(refusal) for \(text.prefix(60))")
            }
        }
    }
}
