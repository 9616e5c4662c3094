@testable import JackAudioSession
import XCTest

/// The route rules the seeds state for options, decided by the planner on
/// its own (no server): each test quotes the seed.
final class RoutePlannerSeedTests: XCTestCase {
    static func device(_ uid: String, _ type: AudioSessionPort, output: Bool) -> PortDescription {
        let direction = output ? "playback" : "capture"
        return PortDescription(portName: uid, portType: type, uid: uid,
                               channels: (1...2).map { ChannelDescription(channelName: "\(direction)_\($0)", channelNumber: $0,
                                                                          jackPort: "\(uid):\(direction)_\($0)") })
    }

    let catalog = DeviceCatalog(
        inputs: [device("mic", .builtInMic, output: false), device("hands-free", .bluetoothHFP, output: false)],
        outputs: [device("speaker", .builtInSpeaker, output: true), device("receiver", .builtInReceiver, output: true)])

    func plan(_ category: Category, _ options: CategoryOptions = []) -> RoutePlan {
        var history = DeviceHistory(catalog: catalog)
        history.inputs.append("hands-free")   // the headset came last
        let request = RoutePlanner.Request(category: category, options: options, outputOverride: .none,
                                           preferredInput: nil, explicitInputs: [], explicitOutputs: [],
                                           inputChannels: 2, outputChannels: 2, streams: [])
        return RoutePlanner.plan(request, catalog: catalog, history: history)
    }

    /// "By default, using this category implies that audio is routed to the
    /// receiver"; defaultToSpeaker: "audio routes to the built-in speaker and
    /// microphone when no other audio route is connected".
    func testPlayAndRecordPlaysThroughTheReceiverUnlessDefaultToSpeaker() {
        XCTAssertEqual(plan(.playAndRecord).route.outputs.map(\.uid), ["receiver"])
        XCTAssertEqual(plan(.playAndRecord, [.defaultToSpeaker]).route.outputs.map(\.uid), ["speaker"])
        XCTAssertEqual(plan(.playback).route.outputs.map(\.uid), ["speaker"], "other categories keep the first device")
    }

    /// allowBluetooth: "Allows Bluetooth hands-free devices to appear as available input routes."
    func testBluetoothHandsFreeIsAnInputOnlyWithAllowBluetooth() {
        XCTAssertEqual(RoutePlanner.availableInputs(catalog, category: .playAndRecord, options: []).map(\.uid), ["mic"])
        XCTAssertEqual(RoutePlanner.availableInputs(catalog, category: .playAndRecord, options: [.allowBluetooth]).map(\.uid),
                       ["mic", "hands-free"])
        XCTAssertEqual(RoutePlanner.availableInputs(catalog, category: .record, options: []).map(\.uid), ["mic"])
        XCTAssertEqual(plan(.playAndRecord).route.inputs.map(\.uid), ["mic"], "a headset that came last is not taken")
        XCTAssertEqual(plan(.playAndRecord, [.allowBluetooth]).route.inputs.map(\.uid), ["hands-free"], "last in wins")
        XCTAssertEqual(plan(.playAndRecord, [.allowBluetooth]).inputPorts, ["hands-free:capture_1", "hands-free:capture_2"])
    }

    /// "The following categories support both the mirrored and non-mirrored
    /// versions of Airplay: SoloAmbient, Ambient, Playback. The
    /// PlayAndRecord category only supports mirrored Airplay", and "by
    /// activating the AVAudioSessionCategoryOptionAllowAirPlay option, you can
    /// enable non-mirrored AirPlay output" with it.
    func testAirPlayPlaysUnderPlaybackCategoriesAndUnderPlayAndRecordOnlyWithAllowAirPlay() throws {
        let catalog = DeviceCatalog(inputs: [Self.device("mic", .builtInMic, output: false)],
                                    outputs: [Self.device("speaker", .builtInSpeaker, output: true),
                                              Self.device("appletv", .airPlay, output: true)])
        func outputs(_ category: Category, _ options: CategoryOptions = []) -> [String] {
            RoutePlanner.usable(catalog, category: category, options: options).outputs.map(\.uid)
        }
        for category in [Category.soloAmbient, .ambient, .playback] {
            XCTAssertEqual(outputs(category), ["speaker", "appletv"], "\(category)")
        }
        XCTAssertEqual(outputs(.playAndRecord), ["speaker"])
        XCTAssertEqual(outputs(.playAndRecord, .allowAirPlay), ["speaker", "appletv"])
        XCTAssertEqual(outputs(.multiRoute), ["speaker"], "not among the guide's AirPlay categories")
        XCTAssertEqual(try CategoryRules.resolve(.playAndRecord, mode: .default, options: .allowAirPlay), .allowAirPlay)
        XCTAssertThrowsError(try CategoryRules.resolve(.playback, mode: .default, options: .allowAirPlay)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .badParam)
        }
        XCTAssertEqual(CategoryOptions(name: "allowAirPlay"), .allowAirPlay)
        XCTAssertEqual(CategoryOptions.allowAirPlay.rawValue, 0x40, "AVAudioSessionCategoryOptionAllowAirPlay")
    }
}
