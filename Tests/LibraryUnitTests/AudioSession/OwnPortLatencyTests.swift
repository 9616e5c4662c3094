@testable import JackAudioSession
import JackKit
import XCTest

/// The latency the session reports for its own ports, decided from what its
/// ports and the ones they are connected to answer: ports held in memory, no
/// jackd, so jackd's rule and PipeWire's are both tried here. (Against real
/// servers: LatencyTests, LatencyTrustTests and the PipeWire tests.)
final class OwnPortLatencyTests: XCTestCase {
    /// A port and the ranges JACK would hold for it.
    final class HeldPort: LatencyPort {
        var connections: [String]
        var capture: LatencyRange
        var playback: LatencyRange

        init(connections: [String] = [], capture: LatencyRange = .zero, playback: LatencyRange = .zero) {
            self.connections = connections
            self.capture = capture
            self.playback = playback
        }

        func latencyRange(_ mode: LatencyMode) -> LatencyRange { mode == .capture ? capture : playback }
        func setLatencyRange(_ range: LatencyRange, _ mode: LatencyMode) {
            if mode == .capture { capture = range } else { playback = range }
        }
    }

    // The hardware: two capture ports (one slower) and two playback ports.
    let hardware: [String: HeldPort] = [
        "system:capture_1": HeldPort(capture: LatencyRange(min: 256, max: 256)),
        "system:capture_2": HeldPort(capture: LatencyRange(min: 256, max: 300)),
        "system:playback_1": HeldPort(playback: LatencyRange(min: 512, max: 512)),
        "system:playback_2": HeldPort(playback: LatencyRange(min: 512, max: 512)),
    ]

    func latency(_ inputs: [HeldPort], _ outputs: [HeldPort], added: Int = 0, correction: LatencyCorrection = .none,
                 pipeWire: Bool = false) -> OwnPortLatency<HeldPort> {
        OwnPortLatency(inputs: inputs, outputs: outputs, addedLatencyFrames: added, correction: correction,
                       passesCorrectionOn: !pipeWire, portNamed: { [hardware] in hardware[$0] })
    }

    func testEachSideIsTheUnionOfWhatItIsConnectedToPlusTheCorrectionAndDownstreamSeesTheTotal() {
        let inputs = [HeldPort(connections: ["system:capture_1"]), HeldPort(connections: ["system:capture_2"])]
        let outputs = [HeldPort(connections: ["system:playback_1"])]
        let rules = latency(inputs, outputs, added: 64, correction: LatencyCorrection(captureFrames: 10, playbackFrames: -12))
        rules.report(.capture)
        rules.report(.playback)
        XCTAssertEqual(inputs.map(\.capture), Array(repeating: LatencyRange(min: 266, max: 310), count: 2))
        XCTAssertEqual(outputs[0].playback, LatencyRange(min: 500, max: 500))
        // What arrives at the inputs leaves the outputs 64 frames later, and the other way round.
        XCTAssertEqual(outputs[0].capture, LatencyRange(min: 330, max: 374))
        XCTAssertEqual(inputs.map(\.playback), Array(repeating: LatencyRange(min: 564, max: 564), count: 2))
        XCTAssertEqual(rules.inputRange, LatencyRange(min: 266, max: 310))
        XCTAssertEqual(rules.outputRange, LatencyRange(min: 500, max: 500))
        XCTAssertTrue(rules.isSettled(setsOwnRanges: true))
    }

    func testOnPipeWireTheCorrectionStaysOnTheSessionsSideAndNeverGrows() {
        let inputs = [HeldPort(connections: ["system:capture_1"])]
        let outputs = [HeldPort(connections: ["system:playback_1"])]
        let rules = latency(inputs, outputs, correction: LatencyCorrection(captureFrames: 10, playbackFrames: 20), pipeWire: true)
        for _ in 0..<5 {
            rules.report(.capture)
            rules.report(.playback)
        }
        XCTAssertEqual(inputs[0].capture, LatencyRange(min: 266, max: 266), "five passes, one correction")
        XCTAssertEqual(outputs[0].capture, LatencyRange(min: 256, max: 256), "passed on without it")
        XCTAssertEqual(inputs[0].playback, LatencyRange(min: 512, max: 512))
        XCTAssertEqual(outputs[0].playback, LatencyRange(min: 532, max: 532))
    }

    func testUnconnectedPortsReportZeroAndTheSessionSaysItDoesNotKnow() {
        let inputs = [HeldPort(capture: LatencyRange(min: 99, max: 99))]
        let rules = latency(inputs, [], correction: LatencyCorrection(captureFrames: 10))
        rules.report(.capture)
        XCTAssertEqual(inputs[0].capture, LatencyRange(min: 10, max: 10), "nothing connected: the correction alone")
        XCTAssertNil(rules.inputRange, "not a made-up zero")
        XCTAssertNil(rules.outputRange)
        rules.report(.playback)
        XCTAssertEqual(inputs[0].playback, .zero, "no outputs: nothing passed through")
    }

    func testSettledOnlyOnceJackHoldsTheRangesTheRulesGive() {
        let inputs = [HeldPort(connections: ["system:capture_1"]), HeldPort()]
        let outputs = [HeldPort(connections: ["system:playback_2"])]
        let correction = LatencyCorrection(captureFrames: 5, playbackFrames: 7)
        let rules = latency(inputs, outputs, correction: correction)
        XCTAssertFalse(rules.isSettled(setsOwnRanges: true), "no latency pass yet: the ports read zero")
        rules.report(.capture)
        XCTAssertFalse(rules.isSettled(setsOwnRanges: true), "the playback pass is still to come")
        rules.report(.playback)
        XCTAssertTrue(rules.isSettled(setsOwnRanges: true), "an unconnected port is not waited for")
        // Without its own callback, libjack propagates the connected range, which lacks the correction.
        inputs[0].capture = LatencyRange(min: 256, max: 256)
        XCTAssertFalse(rules.isSettled(setsOwnRanges: false))
        inputs[0].capture = LatencyRange(min: 261, max: 261)
        XCTAssertTrue(rules.isSettled(setsOwnRanges: false))
    }
}
