import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
import Synchronization
import XCTest

/// The seeds' elements the other suites did not reach: data sources with
/// orientation and polar patterns, properties observed as they change, the
/// shared session beside a named one, and the smaller rules, each from the
/// seeds' words (quoted above each test) on a real jackd.
final class SeedRemainderTests: JackTestCase {
    /// Collects the values of `AudioSession.values(of:)` for a test to inspect.
    private final class Values<Value: Sendable>: Sendable {
        private final class Seen: Sendable {
            let values = Mutex<[Value]>([])
        }
        private let seen = Seen()
        private let task: Task<Void, Never>

        init(_ stream: AsyncStream<Value>) {
            let seen = seen
            task = Task { for await value in stream { seen.values.withLock { $0.append(value) } } }
        }

        deinit { task.cancel() }

        var all: [Value] { seen.values.withLock { $0 } }
    }

    /// An iPhone-like built-in microphone as the guide's "Setting a Preferred
    /// Data Source" describes it: bottom, front and back microphones, the
    /// front and back ones able to switch between cardioid and
    /// omnidirectional, one JACK port group (a data source) each.
    private func builtInMicrophones(on server: LoopbackServer) throws -> SimulatedDevice {
        let switchable: [PolarPattern] = [.omnidirectional, .cardioid]
        return try SimulatedDevice(
            name: "iphone-mic", serverName: server.name, type: .builtInMic, channels: 3,
            banks: ["Bottom", "Front", "Back"],
            traits: ["Bottom": DataSourceTraits(location: .lower, orientation: .bottom),
                     "Front": DataSourceTraits(location: .upper, orientation: .front, supportedPolarPatterns: switchable,
                                               selectedPolarPattern: .omnidirectional),
                     "Back": DataSourceTraits(location: .upper, orientation: .back, supportedPolarPatterns: switchable,
                                              selectedPolarPattern: .omnidirectional)])
    }

    /// A playAndRecord session named `name`, active on `server`.
    private func activePlayAndRecordSession(_ name: String, on server: LoopbackServer) throws -> AudioSession {
        let session = AudioSession(clientName: name, serverName: server.name, recordConsent: .givenByCaller)
        try session.setCategory(.playAndRecord)
        try session.setActive(true)
        return session
    }

    /// The guide's "Putting It All Together" listing, line for line with only
    /// the names changed: "Preferred Mic = Front, Preferred Polar Pattern =
    /// Cardioid", whose output on an iPhone is "Name: Front / Polar Pattern: Cardioid".
    func testTheGuidesMicrophoneListingSelectsTheFrontMicrophoneInCardioid() throws {
        let server = try startServer(period: 256)
        let microphones = try builtInMicrophones(on: server)
        defer { microphones.unplug() }
        let session = try activePlayAndRecordSession("listing", on: server)
        defer { session.close() }

        let preferredMicOrientation = AVAudioSessionOrientationFront
        let preferredPolarPattern = AVAudioSessionPolarPatternCardioid
        let inputs = try XCTUnwrap(session.availableInputs)
        let builtInMic = try XCTUnwrap(inputs.first { $0.portType == AVAudioSessionPortBuiltInMic })
        let dataSource = try XCTUnwrap(builtInMic.dataSources?.first { $0.orientation == preferredMicOrientation })
        XCTAssertEqual(dataSource.dataSourceName, "Front")
        XCTAssertEqual(dataSource.location, .upper)
        XCTAssertEqual(dataSource.supportedPolarPatterns, [.omnidirectional, .cardioid])
        XCTAssertEqual(builtInMic.dataSources?.first?.supportedPolarPatterns, nil,
                       "the bottom microphone cannot switch: nil, as the seeds say for a source without patterns")
        try dataSource.setPreferredPolarPattern(preferredPolarPattern)
        try builtInMic.setPreferredDataSource(dataSource)
        try session.setPreferredInput(builtInMic)

        XCTAssertTrue(waitUntil {
            session.currentRoute.inputs.first?.selectedDataSource?.selectedPolarPattern == .cardioid
        }, "\(session.currentRoute.inputs)")
        let port = try XCTUnwrap(session.currentRoute.inputs.first)
        XCTAssertEqual(port.portType, .builtInMic)
        XCTAssertEqual(port.selectedDataSource?.dataSourceName, "Front")
        XCTAssertEqual("\(port.selectedDataSource?.selectedPolarPattern ?? "[none]")", "Cardioid")
        XCTAssertEqual(port.selectedDataSource?.preferredPolarPattern, .cardioid)
        assertEventuallyEqual(session.client?.port(named: "listing:in_1")?.connections, ["iphone-mic:capture_2"],
                       "the front microphone's port is the one connected")
    }

    /// "You may change the output source only to one of the
    /// AVAudioSessionDataSourceDescription objects in the outputDataSources
    /// array"; polar patterns likewise only to `supportedPolarPatterns`.
    func testDataSourceChoicesOutsideWhatIsOfferedAreBadParam() throws {
        let server = try startServer(period: 256)
        let microphones = try builtInMicrophones(on: server)
        defer { microphones.unplug() }
        let session = try activePlayAndRecordSession("chooser", on: server)
        defer { session.close() }
        func code(_ body: () throws -> Void) -> AudioSessionError.Code? {
            do { try body() } catch let error as AudioSessionError { return error.sessionCode } catch { return nil }
            return nil
        }
        let mic = try XCTUnwrap(session.availableInputs?.first { $0.uid == "iphone-mic" })
        let sources = try XCTUnwrap(mic.dataSources)
        XCTAssertEqual(code { try sources[0].setPreferredPolarPattern(.cardioid) }, .badParam, "the bottom one has none")
        XCTAssertEqual(code { try sources[1].setPreferredPolarPattern(.subcardioid) }, .badParam)
        XCTAssertNil(session.outputDataSources)
        XCTAssertNil(session.outputDataSource)
        XCTAssertNoThrow(try session.setOutputDataSource(nil))
        XCTAssertEqual(code { try session.setOutputDataSource(sources[1]) }, .badParam)
        // A description made by hand belongs to no session: its setters say so instead of doing nothing.
        let madeByHand = DataSourceDescription(dataSourceID: 2, dataSourceName: "Front", channels: sources[1].channels,
                                               traits: sources[1].traits)
        XCTAssertEqual(madeByHand, sources[1], "the link to the session is not part of the value")
        XCTAssertEqual(code { try madeByHand.setPreferredPolarPattern(.cardioid) }, .badParam)
        let otherDevice = PortDescription(portName: "x", portType: .builtInMic, uid: "iphone-mic", channels: [])
        XCTAssertEqual(code { try otherDevice.setPreferredDataSource(sources[1]) }, .badParam)
    }

    /// "You can observe changes to the value of this property using
    /// key-value observing" (inputNumberOfChannels, outputNumberOfChannels,
    /// inputDataSources, ...): here `values(of:)`.
    func testObservedPropertiesGiveEachNewValue() throws {
        let server = try startServer(period: 256)
        let microphones = try builtInMicrophones(on: server)
        defer { microphones.unplug() }
        let session = AudioSession(clientName: "observed", serverName: server.name, recordConsent: .givenByCaller)
        defer { session.close() }
        let categories = Values(session.values(of: \.category))
        let inputChannels = Values(session.values(of: \.inputNumberOfChannels))
        let outputChannels = Values(session.values(of: \.outputNumberOfChannels))
        let source = Values(session.values(of: \.inputDataSource?.dataSourceName))
        XCTAssertTrue(waitUntil { categories.all == [.soloAmbient] && inputChannels.all == [0] }, "\(categories.all)")

        try session.setCategory(.playAndRecord)
        XCTAssertTrue(waitUntil { categories.all == [.soloAmbient, .playAndRecord] }, "\(categories.all)")
        try session.setPreferredInputNumberOfChannels(1)
        try session.setActive(true)
        XCTAssertTrue(waitUntil { inputChannels.all == [0, 1] && outputChannels.all.last == 2 },
                      "\(inputChannels.all) \(outputChannels.all)")
        try session.setPreferredInput(XCTUnwrap(session.availableInputs?.first { $0.uid == "iphone-mic" }))
        XCTAssertTrue(waitUntil { source.all.last == "Bottom" }, "the first bank: \(source.all)")

        let back = try XCTUnwrap(session.inputDataSources?.first { $0.orientation == .back })
        try session.setInputDataSource(back)
        XCTAssertTrue(waitUntil { source.all.last == "Back" }, "\(source.all)")
        try session.setActive(false)
        XCTAssertTrue(waitUntil { inputChannels.all.last == 0 }, "\(inputChannels.all)")
        XCTAssertEqual(inputChannels.all, [0, 1, 0], "equal values in a row are given once")
        XCTAssertEqual(categories.all, [.soloAmbient, .playAndRecord])
    }

    /// A stream ends with its session.
    func testAValuesStreamEndsWhenItsSessionGoes() async throws {
        var session: AudioSession? = AudioSession(clientName: "brief", serverName: "unused")
        let stream = try XCTUnwrap(session).values(of: \.category)
        let ended = Task {
            var seen: [JackAudioSession.Category] = []
            for await category in stream { seen.append(category) }
            return seen
        }
        try session?.setCategory(.playback)
        await Task.yield()   // the consumer may or may not have its first value: the end is what is tested
        session = nil
        let seen = await ended.value
        XCTAssertTrue(seen.count <= 2 && Set(seen).isSubset(of: [.soloAmbient, .playback]), "\(seen)")
    }

    /// "The shared audio session instance" (the Class Reference's
    /// sharedInstance). Beside it, `AudioSession(clientName:)` makes a
    /// session of its own: what a program that uses both gets is two
    /// sessions, each with its own JACK client, that arbitrate as two apps
    /// would (docs/SESSION.md, Differences).
    func testTheSharedSessionAndANamedOneAreTwoSessionsThatArbitrate() throws {
        let server = try startServer(period: 256)
        setenv("JACK_DEFAULT_SERVER", server.name, 1)
        let shared = AudioSession.shared
        unsetenv("JACK_DEFAULT_SERVER")
        XCTAssertTrue(shared === AudioSession.shared)
        XCTAssertEqual(shared.serverName, server.name)
        XCTAssertEqual(shared.clientName, ProcessInfo.processInfo.processName)
        defer { shared.close() }
        try shared.setCategory(.playback)
        try shared.setActive(true)
        let recorder = EventRecorder(shared)

        let named = AudioSession(clientName: "named", serverName: server.name)
        defer { named.close() }
        try named.setCategory(.playback)
        try named.setActive(true)
        XCTAssertNotEqual(shared.client?.name, named.client?.name, "two JACK clients")
        XCTAssertTrue(waitUntil { recorder.interruptions.contains { $0.type == .began } }, "\(recorder.events)")
        XCTAssertFalse(shared.isActive, "the named session interrupted the shared one, as another app would")
        try named.setActive(false, options: .notifyOthersOnDeactivation)
        XCTAssertTrue(waitUntil { recorder.interruptions.contains { $0.type == .ended } }, "\(recorder.events)")
    }

    /// The seeds' smaller rules: "notifyOthersOnDeactivation ... is ignored"
    /// on activation (only deactivation uses it); soloAmbient, the default
    /// category, has no input ("the default category ... playback only");
    /// `preferredInput` "nil ... if no preference is set" and the
    /// preference lapses with its device; the maximum channel counts are the
    /// route's devices'; the receiver, headset microphone, Bluetooth and
    /// AirPlay port types are devices like the others.
    func testTheSmallerRules() throws {
        let server = try startServer(period: 256)
        let headset = try SimulatedDevice(name: "headset-mic", serverName: server.name, type: .headsetMic, channels: 1)
        defer { headset.unplug() }
        let session = AudioSession(clientName: "rules", serverName: server.name, recordConsent: .givenByCaller)
        defer { session.close() }

        try session.setActive(true, options: .notifyOthersOnDeactivation)
        XCTAssertTrue(session.isActive, "the option is ignored on activation")
        XCTAssertEqual(session.category, .soloAmbient)
        XCTAssertEqual(session.inputNumberOfChannels, 0, "the default category has no input")
        XCTAssertThrowsError(try session.checkedInputNumberOfChannels()) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory)
        }
        XCTAssertEqual(session.availableInputs?.isEmpty, true, "no input under a category without input")
        let interface = try SimulatedDevice(name: "interface", serverName: server.name, type: .usbAudio, channels: 6)
        defer { interface.unplug() }
        XCTAssertTrue(waitUntil { session.currentRoute.outputs.map(\.uid) == ["interface"] }, "last in wins")
        XCTAssertEqual(session.maximumOutputNumberOfChannels, 6, "the route's device has six")
        try session.setActive(false)

        try session.setCategory(.playAndRecord, options: .allowBluetooth)
        let bluetooth = try SimulatedDevice(name: "bt-headset", serverName: server.name, type: .bluetoothHFP, channels: 1)
        defer { bluetooth.unplug() }
        let receiver = try SimulatedDevice(name: "earpiece", serverName: server.name, type: .builtInReceiver, channels: 1)
        defer { receiver.unplug() }
        let airPlay = try SimulatedDevice(name: "appletv", serverName: server.name, type: .airPlay)
        defer { airPlay.unplug() }
        XCTAssertTrue(waitUntil {
            Set(session.availableInputs?.map(\.portType) ?? []).isSuperset(of: [.headsetMic, .bluetoothHFP, .usbAudio])
        }, "\(session.availableInputs ?? [])")
        XCTAssertNil(session.preferredInput)
        let headsetInput = try XCTUnwrap(session.availableInputs?.first { $0.portType == .headsetMic })
        try session.setPreferredInput(headsetInput)
        XCTAssertEqual(session.preferredInput?.uid, "headset-mic")
        try session.setActive(true)
        XCTAssertEqual(session.currentRoute.inputs.map(\.uid), ["headset-mic"])
        XCTAssertEqual(session.maximumInputNumberOfChannels, 1)
        XCTAssertEqual(session.outputDataSource, nil)
        headset.unplug()
        XCTAssertTrue(waitUntil { session.preferredInput == nil }, "the preferred device went")
        XCTAssertTrue(waitUntil { !session.currentRoute.inputs.isEmpty && session.currentRoute.inputs.map(\.uid) != ["headset-mic"] },
                      "\(session.currentRoute.inputs)")
        XCTAssertTrue(session.currentRoute.outputs.allSatisfy { [.airPlay, .builtInReceiver, .usbAudio].contains($0.portType) },
                      "\(session.currentRoute.outputs)")
    }

    /// docs/SESSION.md, Differences: "Only sessions take part": a plain JACK client
    /// playing to the speakers is not "other audio" (`isOtherAudioPlaying`:
    /// "Indicates whether another app is currently playing audio"), and a
    /// non-mixable session's activation leaves it playing and connected.
    func testAPlainJackClientTakesNoPartInTheArbitration() throws {
        let server = try startServer(period: 256)
        let plain = try Client(name: "plain-player", serverName: server.name)
        defer { plain.close() }
        let output = try plain.registerPort("out", flags: .output)
        try plain.activate()
        try plain.connect(output.name, to: "system:playback_1")

        let listener = AudioSession(clientName: "listener", serverName: server.name)
        defer { listener.close() }
        try listener.setCategory(.ambient)
        try listener.setActive(true)
        XCTAssertFalse(listener.isOtherAudioPlaying, "a plain client is not another app's audio here")
        XCTAssertFalse(listener.secondaryAudioShouldBeSilencedHint)

        let solo = AudioSession(clientName: "solo", serverName: server.name)
        defer { solo.close() }
        try solo.setCategory(.playback)
        try solo.setActive(true)
        XCTAssertTrue(waitUntil { listener.isOtherAudioPlaying }, "a session is")
        assertEventuallyEqual(output.connections, ["system:playback_1"], "the plain client was left alone")
        XCTAssertFalse(plain.isClosed)
    }

    /// "AVAudioSessionRouteChangeReasonNoSuitableRouteForCategory: The
    /// route changed because no suitable route is now available for the
    /// specified category." A server whose only output device goes: a
    /// playback session is left without a route, and says why.
    func testAPlaybackSessionWhoseOnlyOutputGoesHasNoSuitableRoute() throws {
        let server = try startServer(loopbackChannels: 0, period: 256, backendArguments: ["-P", "0", "-C", "0"])
        let headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        let session = AudioSession(clientName: "stranded", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback)
        try session.setActive(true)
        XCTAssertEqual(session.currentRoute.outputs.map(\.uid), ["headphones"])
        let recorder = EventRecorder(session)
        headphones.unplug()
        XCTAssertTrue(waitUntil { recorder.laterRouteChanges.last?.reason == .noSuitableRouteForCategory },
                      "\(recorder.events)")
        XCTAssertEqual(session.currentRoute.outputs, [])
        XCTAssertTrue(session.isActive, "the session stays active, its ports waiting for a device")
    }
}
