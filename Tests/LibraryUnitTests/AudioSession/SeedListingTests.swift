import JackAudioSession
import Foundation
import LoopbackHarness
import XCTest

/// Lines of the seeds' listings, with only the type and module names
/// changed, compile here and do what the seeds say (without a server: what
/// the session decides).
final class SeedListingTests: XCTestCase {
    let session = AudioSession(clientName: "seeds", serverName: LoopbackServer.uniqueName(prefix: "no-server"))

    /// "guard let info = notification.userInfo, let typeValue =
    /// info[AVAudioSessionInterruptionTypeKey] as? UInt" with
    /// `name: .AVAudioSessionInterruption`: the seeds' names are this package's.
    func testTheSeedsNotificationNamesAndKeysAreThePackages() {
        let info: [AnyHashable: Any] = [AVAudioSessionInterruptionTypeKey: InterruptionType.ended.rawValue,
                                        AVAudioSessionInterruptionOptionKey: InterruptionOptions.shouldResume.rawValue]
        let notification = Notification(name: .AVAudioSessionInterruption, object: session, userInfo: info)
        guard let userInfo = notification.userInfo,
              let typeValue = userInfo[AudioSessionNotification.interruptionTypeKey] as? UInt,
              let type = InterruptionType(rawValue: typeValue),
              let optionsValue = userInfo[AudioSessionNotification.interruptionOptionKey] as? UInt else {
            return XCTFail("the seeds' keys are not the keys the session posts under")
        }
        XCTAssertEqual(type, .ended)
        XCTAssertTrue(InterruptionOptions(rawValue: optionsValue).contains(.shouldResume))
        XCTAssertEqual(notification.name, AudioSessionNotification.interruption)
        XCTAssertEqual(Notification.Name.AVAudioSessionRouteChange, AudioSessionNotification.routeChange)
        XCTAssertEqual(Notification.Name.AVAudioSessionMediaServicesWereReset, AudioSessionNotification.mediaServicesWereReset)
        XCTAssertEqual(Notification.Name.AVAudioSessionMediaServicesWereLost, AudioSessionNotification.mediaServicesWereLost)
        XCTAssertEqual(Notification.Name.AVAudioSessionSilenceSecondaryAudioHint,
                       AudioSessionNotification.silenceSecondaryAudioHint)
        XCTAssertEqual(AVAudioSessionRouteChangeReasonKey, "AVAudioSessionRouteChangeReasonKey")
        XCTAssertEqual(AVAudioSessionRouteChangePreviousRouteKey, "AVAudioSessionRouteChangePreviousRouteKey")
        XCTAssertEqual(AVAudioSessionSilenceSecondaryAudioHintTypeKey, "AVAudioSessionSilenceSecondaryAudioHintTypeKey")
    }

    /// "catch let error as NSError { print(error.code, error.localizedDescription) }":
    /// the seeds' line matches the session's errors, which are NSErrors of
    /// AVAudioSession's domain and code; a plain `catch` keeps them typed.
    func testErrorsCarryAVAudioSessionsCodeAndMessage() throws {
        try session.setCategory(.playback)
        var caught: NSError?
        do {
            try session.setCategory(.playback, mode: .voiceChat)
            XCTFail("voiceChat is not a mode of playback")
        } catch let error as NSError {
            caught = error
        }
        XCTAssertEqual(caught?.domain, NSOSStatusErrorDomain)
        XCTAssertEqual(caught?.code, 560_161_140, "'!cat' as AVAudioSession's integer")
        XCTAssertTrue(caught?.localizedDescription.contains("voiceChat") == true, "\(String(describing: caught))")
        do {
            try session.setCategory(.playback, mode: .voiceChat)
        } catch {
            // Typed throws: `error` is an AudioSessionError here, with no cast.
            XCTAssertEqual(error.sessionCode, .incompatibleCategory)
            XCTAssertEqual(error.localizedDescription, error.message)
            XCTAssertEqual(error.nsError, caught, "the same code and message")
        }
        // Through untyped throws, the cast is a real one, and matches.
        func untyped() throws { try session.setCategory(.playback, mode: .voiceChat) }
        do {
            try untyped()
        } catch let error as NSError {
            XCTAssertEqual(error.code, 560_161_140)
        } catch {
            XCTFail("not caught as NSError: \(error)")
        }
        let badParam = AudioSessionError(.badParam, "the duration must be positive")
        XCTAssertEqual(badParam.code, -50)
        XCTAssertEqual(badParam.localizedDescription, "the duration must be positive")
        XCTAssertEqual(AudioSessionError.Code.siriIsRecording.fourCharacterCode, "siri")
    }

    /// "AVAudioSession.Category.playAndRecord", "AVAudioSession.Mode.measurement":
    /// the qualified names compile, naming the module's types.
    func testTheSeedsQualifiedTypeNamesCompile() throws {
        let category: AudioSession.Category = .playAndRecord
        let mode = AudioSession.Mode.measurement
        let options: AudioSession.CategoryOptions = [.mixWithOthers]
        try session.setCategory(category, mode: mode, options: options)
        XCTAssertEqual(session.category, Category.playAndRecord)
        XCTAssertEqual(AudioSession.ErrorCode.incompatibleCategory.fourCharacterCode, "!cat")
        XCTAssertEqual(AudioSession.Port.headphones, AudioSessionPort.headphones)
        XCTAssertEqual(AudioSession.RouteChangeReason.newDeviceAvailable.rawValue, 1)
    }

    /// "try session.setMode(.measurement)": the category and its options stay.
    func testSetModeKeepsTheCategoryAndRefusesAModeItDoesNotAllow() throws {
        try session.setCategory(.playAndRecord, options: [.mixWithOthers])
        try session.setMode(.measurement)
        XCTAssertEqual(session.mode, .measurement)
        XCTAssertEqual(session.category, .playAndRecord)
        XCTAssertEqual(session.categoryOptions, [.mixWithOthers])
        try session.setCategory(.playback)
        XCTAssertThrowsError(try session.setMode(.voiceChat)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory)
        }
        XCTAssertEqual(session.mode, .default, "a refused mode changes nothing")
    }

    /// "guard let inputs = session.availableInputs else { return }", and the
    /// latency and channel counts read as plain properties (0 when there is
    /// nothing to report), with the reason still there for those who ask.
    func testPropertiesReadAsTheSeedsReadThem() throws {
        XCTAssertNil(session.availableInputs, "nothing is known before the session reached its server")
        try session.setCategory(.playback)
        let latency: TimeInterval = session.inputLatency
        XCTAssertEqual(latency, 0)
        XCTAssertEqual(session.outputLatency, 0)
        XCTAssertEqual(session.inputNumberOfChannels, 0)
        XCTAssertEqual(session.outputNumberOfChannels, 0)
        XCTAssertThrowsError(try session.checkedInputNumberOfChannels()) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory)
        }
        XCTAssertThrowsError(try session.inputLatencyRange) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory)
        }
        XCTAssertEqual(try session.checkedOutputNumberOfChannels(), 0, "inactive: no channels, and no error")
    }

    /// "AVAudioSessionPortOverride(rawValue:)": the seeds' raw values.
    func testPortOverridesHaveTheSeedsRawValues() {
        XCTAssertEqual(PortOverride(rawValue: 0), PortOverride.none)
        XCTAssertEqual(PortOverride(rawValue: 0x7370_6B72), .speaker, "'spkr'")
        XCTAssertNil(PortOverride(rawValue: 1))
    }

    /// The seeds' `requestRecordPermission { granted in self.x = granted }` from
    /// a class: written with the async form, it compiles in Swift 6 and answers.
    @MainActor
    func testRecordPermissionIsAskedFromAClassWithTheAsyncForm() async throws {
        final class Recorder {
            var mayRecord: Bool?
        }
        let folder = NSTemporaryDirectory() + "seed-permission-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = RecordPermissionStore(path: folder + "/record-permission.json")
        let asking = AudioSession(clientName: "asker", serverName: LoopbackServer.uniqueName(prefix: "no-server"),
                                  applicationName: "seeds-app", recordConsent: .stored(store))
        asking.setRecordPermissionPrompt { _, _ in true }
        let recorder = Recorder()
        recorder.mayRecord = await asking.requestRecordPermission()
        XCTAssertEqual(recorder.mayRecord, true)
        XCTAssertEqual(asking.recordPermission, .granted, "the answer was stored")
        recorder.mayRecord = await asking.requestRecordPermission()
        XCTAssertEqual(recorder.mayRecord, true, "decided: answered at once")
    }

    /// Guide: "The video chat mode can only be used with the
    /// AVAudioSessionCategoryPlayAndRecord category" (the Class Reference also
    /// names Record; docs/SESSION.md's table says why the guide wins).
    func testVideoChatGoesWithPlayAndRecordOnly() throws {
        XCTAssertThrowsError(try session.setCategory(.record, mode: .videoChat)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory)
        }
        try session.setCategory(.playAndRecord, mode: .videoChat)
        XCTAssertEqual(session.categoryOptions, [.allowBluetooth, .defaultToSpeaker], "the options the mode implies")
    }
}
