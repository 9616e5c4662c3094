import JackAudioSession
import Foundation
import JackKit
import JackTestSupport
import LoopbackHarness
import Synchronization
import XCTest

/// Each place where the session once differed from the seeds, tested from
/// the seeds' own words (quoted above each test) on a real jackd. Where we
/// keep a difference on purpose, docs/SESSION.md's "Differences from
/// AVAudioSession" table says why, and the test checks the difference.
final class SeedBehaviourTests: JackTestCase {
    private func events<T>(_ recorder: EventRecorder, _ pick: (AudioSessionEvent) -> T?) -> [T] {
        recorder.events.compactMap(pick)
    }

    /// "AVAudioSessionErrorCodeIncompatibleCategory ... For example, this
    /// error type can occur if you call setPreferredInputNumberOfChannels:error:
    /// while the session's category is set to AVAudioSessionCategoryPlayback."
    func testAChannelPreferenceTheCategoryCannotUseIsIncompatibleCategory() throws {
        let session = AudioSession(clientName: "channels", serverName: "unused")
        try session.setCategory(.playback)
        XCTAssertThrowsError(try session.setPreferredInputNumberOfChannels(1)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory, "\(error)")
        }
        try session.setCategory(.record)
        XCTAssertThrowsError(try session.setPreferredOutputNumberOfChannels(2)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory, "\(error)")
        }
        XCTAssertNoThrow(try session.setPreferredInputNumberOfChannels(1), "record has input")
        XCTAssertEqual(session.preferredInputNumberOfChannels, 1)
    }

    /// Table B-2 of the later guide: "AVAudioSessionModeSpokenAudio |
    /// AVAudioSessionCategoryPlayback", and nothing else.
    func testSpokenAudioGoesWithPlaybackOnly() throws {
        XCTAssertNoThrow(try CategoryRules.resolve(.playback, mode: .spokenAudio, options: []))
        XCTAssertThrowsError(try CategoryRules.resolve(.playAndRecord, mode: .spokenAudio, options: [])) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory)
        }
    }

    /// The uids of the route's outputs and inputs.
    func routeUIDs(_ session: AudioSession) -> ([String], [String]) {
        let route = session.currentRoute
        return (route.outputs.map(\.uid), route.inputs.map(\.uid))
    }

    /// "Calling this method with the AVAudioSessionPortOverrideSpeaker option
    /// and the audio session's category is AVAudioSessionCategoryPlayAndRecord
    /// causes audio to use the built-in speaker and microphone regardless of
    /// other settings. This change will only be in effect until the current
    /// route changes or you call this method again with the
    /// AVAudioSessionPortOverrideNone option." (Class Reference)
    func testTheSpeakerOverrideTakesSpeakerAndMicrophoneUntilTheRouteChanges() throws {
        let server = try startServer(period: 256)
        let speaker = try SimulatedDevice(name: "speaker", serverName: server.name, type: .builtInSpeaker)
        defer { speaker.unplug() }
        let microphone = try SimulatedDevice(name: "mic", serverName: server.name, type: .builtInMic)
        defer { microphone.unplug() }
        let session = AudioSession(clientName: "caller", serverName: server.name, recordConsent: .givenByCaller)
        defer { session.close() }
        try session.setCategory(.playAndRecord)
        try session.setActive(true)
        let recorder = EventRecorder(session)
        // Plugged while the session runs, the USB interface takes the route ("last in wins"). A device's
        // ports are typed one by one, so the route may take its outputs a moment before its inputs (CI,
        // beside a busy core: outputs ["usb"] with inputs still ["system"]): wait for both.
        let usb = try SimulatedDevice(name: "usb", serverName: server.name, type: .usbAudio)
        defer { usb.unplug() }
        XCTAssertTrue(waitUntil { self.routeUIDs(session) == (["usb"], ["usb"]) }, "\(session.currentRoute)")

        try session.overrideOutputAudioPort(.speaker)
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["speaker"])
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["mic"], "the override takes the microphone too")
        assertEventuallyEqual(session.client?.port(named: "caller:in_1")?.connections, ["mic:capture_1"])
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.last?.reason == .override }, "\(recorder.events)")

        let headset = try SimulatedDevice(name: "headset", serverName: server.name, type: .headphones)
        defer { headset.unplug() }
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.last?.reason == .newDeviceAvailable }, "\(recorder.events)")
        XCTAssertTrue(waitUntil { self.routeUIDs(session) == (["headset"], ["headset"]) },
                      "the route changed: the override is over: \(session.currentRoute)")
        headset.unplug()
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.last?.reason == .oldDeviceUnavailable }, "\(recorder.events)")
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["usb"], "not back to the speaker: the override ended")
    }

    /// "If you registered for AVAudioSessionRouteChangeNotification ... your
    /// app can receive notifications of such changes" whether or not its
    /// session is active; and "currentRoute: An object describing the current
    /// audio input and output route." An idle tool sees an interface arrive
    /// before it arms a take; JACK tells a client of new ports only while it
    /// is activated, so an inactive session looks at the ports itself.
    func testAnInactiveSessionFollowsTheDevices() throws {
        let server = try startServer(period: 256)
        let session = AudioSession(clientName: "idle", serverName: server.name, recordConsent: .givenByCaller)
        defer { session.close() }
        try session.setCategory(.record)
        XCTAssertEqual(session.currentRoute, .empty, "nothing is known before the session reaches its server")
        let recorder = EventRecorder(session)
        try session.open()
        XCTAssertFalse(session.isActive)
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["system"], "the route an activation would take")
        XCTAssertTrue(session.isInputAvailable)

        let interface = try SimulatedDevice(name: "interface", serverName: server.name, type: .usbAudio)
        XCTAssertTrue(waitUntil(timeout: 3) { recorder.routeChanges.count == 1 }, "\(recorder.events)")
        XCTAssertEqual(recorder.routeChanges.first?.reason, .newDeviceAvailable)
        XCTAssertEqual(recorder.routeChanges.first?.current.inputs.map(\.uid), ["interface"])
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["interface"])
        XCTAssertFalse(session.isActive, "following the devices does not activate")

        // Active and back: the inactive session goes on following.
        try session.setActive(true)
        assertEventuallyEqual(session.client?.port(named: "idle:in_1")?.connections, ["interface:capture_1"])
        try session.setActive(false)
        let before = recorder.routeChanges.count
        interface.unplug()
        // The device leaves the route with oldDeviceUnavailable. A client's ports
        // and their metadata go one by one: a refresh between them (beside a busy
        // core) may first see the interface without its port type, a change of
        // the route's configuration.
        XCTAssertTrue(waitUntil(timeout: 3) { recorder.routeChanges.last?.current.inputs.map(\.uid) == ["system"] },
                      "\(recorder.routeChanges.dropFirst(before).map(\.reason))")
        let changes = recorder.routeChanges.dropFirst(before)
        XCTAssertEqual(changes.last?.reason, .oldDeviceUnavailable)
        XCTAssertEqual(changes.last?.previous.inputs.map(\.uid), ["interface"])
        XCTAssertTrue(changes.dropLast().allSatisfy { $0.reason == .routeConfigurationChange }, "\(changes.map(\.reason))")
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["system"])
    }

    /// "inputDataSources: An array of AVAudioSessionDataSourceDescription
    /// objects representing available input sources, or nil if switching
    /// between multiple input sources is not currently possible", and
    /// setInputDataSource: "You may change the input source only to one of the
    /// AVAudioSessionDataSourceDescription objects in the inputDataSources
    /// array." On JACK an interface's input banks (its port groups) are its
    /// data sources; choosing one is a route configuration change ("a port's
    /// selected data source has changed").
    func testAnInterfacesInputBanksAreItsDataSources() throws {
        let server = try startServer(period: 256)
        let interface = try SimulatedDevice(name: "interface", serverName: server.name, type: .usbAudio, channels: 4,
                                            banks: ["analogue", "analogue", "adat", "adat"])
        defer { interface.unplug() }
        let session = AudioSession(clientName: "desk", serverName: server.name, recordConsent: .givenByCaller)
        defer { session.close() }
        try session.setCategory(.record)
        try session.setActive(true)
        let recorder = EventRecorder(session)
        XCTAssertEqual(session.availableInputs?.map(\.uid), ["system", "loopback", "interface"], "one device, not one per bank")
        try session.setPreferredInput(session.availableInputs?.first { $0.uid == "interface" })
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["interface"])
        let sources = try XCTUnwrap(session.inputDataSources)
        XCTAssertEqual(sources.map(\.dataSourceName), ["analogue", "adat"])
        XCTAssertEqual(sources.map(\.dataSourceID), [1, 2])
        XCTAssertEqual(session.inputDataSource?.dataSourceName, "analogue")
        assertEventuallyEqual(session.client?.port(named: "desk:in_1")?.connections, ["interface:capture_1"])

        try session.setInputDataSource(sources[1])
        XCTAssertEqual(session.inputDataSource?.dataSourceName, "adat")
        XCTAssertEqual(session.currentRoute.inputs.first?.channels.map(\.jackPort), ["interface:capture_3", "interface:capture_4"])
        assertEventuallyEqual(session.client?.port(named: "desk:in_1")?.connections, ["interface:capture_3"])
        assertEventuallyEqual(session.client?.port(named: "desk:in_2")?.connections, ["interface:capture_4"])
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.last?.reason == .routeConfigurationChange }, "\(recorder.events)")

        let foreign = DataSourceDescription(dataSourceID: 9, dataSourceName: "spdif", channels: [])
        XCTAssertThrowsError(try session.setInputDataSource(foreign)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .badParam)
            XCTAssertTrue("\(error)".contains("analogue, adat"), "\(error)")
        }
        XCTAssertNil(session.outputDataSources, "output banks are devices of their own")
        // The system ports have one bank: nothing to switch.
        try session.setPreferredInput(session.availableInputs?.first { $0.uid == "system" })
        XCTAssertNil(session.inputDataSources)
    }

    /// "You can set a preferred sample rate before or after activating the
    /// audio session", and "To see the effect of this change, use the
    /// sampleRate property." A running JACK server keeps its rate, so the
    /// session says when they differ, and says it again after a reset to a
    /// server at another rate.
    func testAPreferredRateTheServerDoesNotRunIsSaid() throws {
        let server = try startServer(sampleRate: 48000, period: 256)
        let session = AudioSession(clientName: "rate", serverName: server.name)
        defer { session.close() }
        let recorder = EventRecorder(session)
        try session.setCategory(.playback)
        try session.setPreferredSampleRate(44100)
        XCTAssertNil(session.sampleRateMismatch, "no server reached yet")
        try session.setActive(true)
        XCTAssertEqual(session.sampleRateMismatch, SampleRateMismatch(preferredSampleRate: 44100, sampleRate: 48000))
        func mismatches() -> [SampleRateMismatch] {
            events(recorder) { if case let .sampleRateMismatch(mismatch) = $0 { mismatch } else { nil } }
        }
        XCTAssertTrue(waitUntil { mismatches().count == 1 }, "\(recorder.events)")
        try session.setPreferredSampleRate(48000)
        XCTAssertNil(session.sampleRateMismatch)
        server.kill()
        _ = try startServer(name: server.name, sampleRate: 96000, period: 256)
        XCTAssertTrue(waitUntil(timeout: 10) { mismatches().count == 2 }, "\(recorder.events)")
        XCTAssertEqual(mismatches().last, SampleRateMismatch(preferredSampleRate: 48000, sampleRate: 96000))
        XCTAssertEqual(session.sampleRate, 96000)
    }

    /// "When competing audio sessions set preferred hardware values, the
    /// system gives priority to non-mixable sessions. Audio sessions using
    /// the AVAudioSessionCategoryAmbient category or the
    /// AVAudioSessionCategoryOptionMixWithOthers option are less likely to
    /// get their preferred hardware settings." (the later guide, Listing 5-1's
    /// note). A mixable session does not change the period under a
    /// non-mixable measurement in another process; once that one is gone, it does.
    func testAMixableSessionDoesNotChangeThePeriodUnderANonMixableOne() throws {
        let server = try startServer(period: 256)
        let player = Process()
        player.executableURL = URL(fileURLWithPath: jas)
        player.arguments = ["play", "--server", server.name, "--name", "measuring", "--port", "loopback:playback_1"]
        player.standardOutput = FileHandle.nullDevice
        try player.run()
        defer { if player.isRunning { player.terminate() } }
        let probe = AudioSession(clientName: "probe", serverName: server.name)
        defer { probe.close() }
        try probe.open()
        XCTAssertTrue(waitUntil { probe.publishedSessions().contains { $0.state.client == "measuring" && $0.state.active } })

        let session = AudioSession(clientName: "background", serverName: server.name)
        defer { session.close() }
        let recorder = EventRecorder(session)
        func periods() -> [Int] {
            events(recorder) { if case let .ioBufferDurationChange(_, frames) = $0 { frames } else { nil } }
        }
        try session.setCategory(.playback, options: .mixWithOthers)
        try session.setPreferredIOBufferDuration(0.001)
        try session.setActive(true)
        XCTAssertEqual(session.ioBufferFrames, 256, "the non-mixable session keeps the server's period")
        XCTAssertEqual(session.preferredIOBufferDuration, 0.001, "the request stays the app's preference")
        player.interrupt()
        player.waitUntilExit()
        XCTAssertTrue(waitUntil { !probe.publishedSessions().contains { $0.state.client == "measuring" } })
        XCTAssertEqual(periods(), [], "the period did not change while the measurement ran")
        try session.setPreferredIOBufferDuration(0.001)
        XCTAssertTrue(waitUntil { session.ioBufferFrames == 64 }, "alone now, its request is made: \(session.ioBufferFrames)")
        XCTAssertTrue(waitUntil { periods() == [64] }, "ioBufferDurationChange is posted: \(recorder.events)")
    }

    /// "This method always returns immediately: if the user has previously
    /// granted or denied recording permission, it executes the block when
    /// called; otherwise, it displays an alert and executes the block only
    /// after the user has responded to the alert." (Class Reference,
    /// requestRecordPermission:) The alert is the app's: the library asks the
    /// prompt it was given, on a thread of its own.
    func testRequestRecordPermissionReturnsAtOnceAndAnswersWhenThePersonHas() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = RecordPermissionStore(path: "\(folder)/permission.json")
        let session = AudioSession(clientName: "asker", serverName: "unused", applicationName: "asker",
                                   recordConsent: .stored(store))
        let answered = Atomic<Int>(0)   // 0: not yet, 1: false, 2: true
        session.requestRecordPermission { granted in answered.store(granted ? 2 : 1, ordering: .releasing) }
        XCTAssertEqual(answered.load(ordering: .acquiring), 1, "no prompt: false at once")
        XCTAssertEqual(store.permission(for: "asker"), RecordPermission.undetermined, "and nothing decided")

        let person = DispatchSemaphore(value: 0)
        let asked = Atomic<Bool>(false)
        session.setRecordPermissionPrompt { application, server in
            XCTAssertEqual(application, "asker")
            XCTAssertEqual(server, "unused")
            asked.store(true, ordering: .releasing)
            person.wait()
            return true
        }
        answered.store(0, ordering: .releasing)
        let started = Date()
        session.requestRecordPermission { granted in answered.store(granted ? 2 : 1, ordering: .releasing) }
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.5, "it returned at once")
        XCTAssertTrue(waitUntil { asked.load(ordering: .acquiring) })
        XCTAssertEqual(answered.load(ordering: .acquiring), 0, "the block waits for the person")
        person.signal()
        XCTAssertTrue(waitUntil { answered.load(ordering: .acquiring) == 2 })
        XCTAssertEqual(store.permission(for: "asker"), RecordPermission.granted, "remembered")

        answered.store(0, ordering: .releasing)
        session.requestRecordPermission { granted in answered.store(granted ? 2 : 1, ordering: .releasing) }
        XCTAssertEqual(answered.load(ordering: .acquiring), 2, "decided: the block runs when called")
    }

    /// The terminal prompt belongs to `jas`: `jas permission request APP`
    /// asks on its terminal (here a pseudo-terminal made by `script`) and
    /// stores the answer; without a terminal it decides nothing.
    func testJasAsksOnItsTerminalAndTheLibraryNever() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let environment = ["XDG_CONFIG_HOME": folder]
        let noTerminal = try run([jas, "permission", "request", "field-recorder"], environment: environment)
        XCTAssertEqual(noTerminal.status, 1)
        XCTAssertTrue(noTerminal.output.contains("undetermined"), noTerminal.output)
        let typed = try run(["sh", "-c", "printf 'y\\n' | script -qec '\(jas) permission request field-recorder' /dev/null"],
                            environment: environment)
        XCTAssertTrue(typed.output.contains("Allow 'field-recorder' to record audio"), typed.output)
        XCTAssertTrue(typed.output.contains("field-recorder: granted"), typed.output)
        let store = RecordPermissionStore(path: "\(folder)/jackaudiosession/record-permission.json")
        XCTAssertEqual(store.permission(for: "field-recorder"), RecordPermission.granted)
    }

    /// The reset race: an app that reactivates on its own (as the guide tells
    /// it to after "Reactivate audio session, if appropriate") before the
    /// session's own reconnect has, still gets mediaServicesWereReset, once.
    func testAnAppThatReactivatesOnItsOwnIsToldOfTheReset() throws {
        let server = try startServer(period: 256)
        let session = AudioSession(clientName: "eager", serverName: server.name)
        defer { session.close() }
        // The session's own reconnect gives up at once: only the app can bring it back.
        session.reconnectLimit = 0
        try session.setCategory(.playback)
        let recorder = EventRecorder(session)
        try session.setActive(true)
        server.kill()
        func resets() -> [MediaServicesReset] {
            events(recorder) { if case let .mediaServicesWereReset(reset) = $0 { reset } else { nil } }
        }
        XCTAssertTrue(waitUntil { recorder.events.contains { if case .mediaServicesWereLost = $0 { true } else { false } } })
        XCTAssertThrowsError(try session.setActive(true), "the server is not back yet")
        let returned = try startServer(name: server.name, period: 256)
        try session.setActive(true)
        XCTAssertTrue(waitUntil { resets().count == 1 }, "\(recorder.events)")
        XCTAssertEqual(resets().first?.reactivated, true)
        XCTAssertTrue(session.isActive)

        // And when the session's reconnect is still trying: the app's activation wins or the reconnect does, one reset.
        session.reconnectLimit = nil
        returned.kill()
        XCTAssertTrue(waitUntil { !session.isActive })
        _ = try startServer(name: server.name, period: 256)
        let deadline = ContinuousClock.now + .seconds(10)
        while !session.isActive, ContinuousClock.now < deadline {
            try? session.setActive(true)
            usleep(5_000)
        }
        XCTAssertTrue(waitUntil { resets().count == 2 }, "\(recorder.events)")
        usleep(1_500_000)
        XCTAssertEqual(resets().count, 2, "one reset per return: \(recorder.events)")
        XCTAssertTrue(session.isActive)
    }

    /// The guide's "Responding to a Media Server Reset": "After receiving the
    /// notification, your app needs to … When appropriate, reactivate the
    /// AVAudioSession using the setActive:error: method." Under the `.manual`
    /// policy the session is rebuilt on the returned server and waits for the
    /// app; the default (`.automatic`) reactivates by itself (docs/SESSION.md).
    func testUnderTheManualPolicyTheAppReactivatesAfterTheReset() throws {
        let server = try startServer(period: 256)
        let session = AudioSession(clientName: "seedlike", serverName: server.name)
        defer { session.close() }
        session.resetPolicy = .manual
        try session.setCategory(.playback)
        let recorder = EventRecorder(session)
        try session.setActive(true)
        server.kill()
        XCTAssertTrue(waitUntil { recorder.events.contains { if case .mediaServicesWereLost = $0 { true } else { false } } })
        _ = try startServer(name: server.name, period: 256)
        func resets() -> [MediaServicesReset] {
            events(recorder) { if case let .mediaServicesWereReset(reset) = $0 { reset } else { nil } }
        }
        XCTAssertTrue(waitUntil(timeout: 20) { resets().count == 1 }, "\(recorder.events)")
        XCTAssertEqual(resets().first?.reactivated, false, "the session does not reactivate by itself")
        XCTAssertFalse(session.isActive)
        try session.setActive(true)
        XCTAssertTrue(session.isActive, "the app reactivates, as the seeds say")
        XCTAssertEqual(session.outputNumberOfChannels, 2)
    }

    /// The guide's "Fine-Tuning a Category": "You can override the
    /// interruption characteristic of the AVAudioSessionCategoryPlayback,
    /// AVAudioSessionCategoryPlayAndRecord, and AVAudioSessionCategoryMultiRoute
    /// categories so that other audio is allowed to mix with yours." (The
    /// Class Reference names only the first two; we follow the guide.) A
    /// stimulus player on two devices next to a measurement: with
    /// mixWithOthers it leaves the measurement alone; without, it interrupts it.
    func testAMultiRoutePlayerThatMixesLeavesTheMeasurementAlone() throws {
        let server = try startServer(loopbackChannels: 4, period: 256)
        let meter = AudioSession(clientName: "meter", serverName: server.name, recordConsent: .givenByCaller)
        defer { meter.close() }
        let meterEvents = EventRecorder(meter)
        try meter.setCategory(.playAndRecord, mode: .measurement)
        meter.setPreferredInputPortNames(["loopback:capture_1"])
        meter.setPreferredOutputPortNames(["loopback:playback_1"])
        try meter.setActive(true)
        for (options, interrupts) in [(CategoryOptions.mixWithOthers, false), ([], true)] {
            let stimulus = AudioSession(clientName: "stimulus", serverName: server.name, recordConsent: .givenByCaller)
            defer { stimulus.close() }
            try stimulus.setCategory(.multiRoute, options: options)
            try stimulus.setActive(true)
            if interrupts {
                XCTAssertTrue(waitUntil(timeout: 3) { !meter.isActive }, "a non-mixable multiRoute session interrupts")
            } else {
                // Two whole arbitrations of the meter after the stimulus activated.
                let seen = meter.arbitrationsCompleted
                XCTAssertTrue(waitUntil(timeout: 10) { meter.arbitrationsCompleted >= seen + 2 })
                XCTAssertTrue(meter.isActive, "mixWithOthers: the measurement goes on: \(meterEvents.events)")
                XCTAssertTrue(meterEvents.interruptions.isEmpty)
            }
            XCTAssertTrue(stimulus.isActive)
            try stimulus.setActive(false, options: .notifyOthersOnDeactivation)
        }
    }
}
