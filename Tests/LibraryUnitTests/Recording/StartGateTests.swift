@testable import Capture
@testable import Recording
import XCTest

/// Where a take starts, without a server: cycles made up with known frames
/// are handed to the gate as the disk loop hands them.
final class StartGateTests: XCTestCase {
    /// A cycle of `frames` frames of `channels` channels, each sample `value`,
    /// except those `loud` names (frame, channel, value).
    private func cycle(at frameTime: UInt32, frames: Int = 64, channels: Int = 2, value: Float,
                       loud: [(frame: Int, channel: Int, value: Float)] = []) -> (CycleHeader, [Float]) {
        var samples = [Float](repeating: value, count: frames * channels)
        for sample in loud { samples[sample.frame * channels + sample.channel] = sample.value }
        return (CycleHeader(frameTime: frameTime, frames: frames, nanoseconds: 0, epoch: 1), samples)
    }

    private func admit(_ gate: inout StartGate, _ cycle: (CycleHeader, [Float]), requestedFrame: UInt32? = nil) -> Int? {
        cycle.1.withUnsafeBufferPointer { gate.admit(cycle.0, $0, requestedFrame: requestedFrame) }
    }

    private func open(_ gate: inout StartGate, _ cycle: (CycleHeader, [Float]), offset: Int) -> StartGate.Opening {
        cycle.1.withUnsafeBufferPointer { gate.open(cycle.0, $0, offset: offset) }
    }

    /// The pre-roll's samples as the gate hands them on, interleaved.
    private func preroll(_ gate: inout StartGate) -> [Float] {
        var samples: [Float] = []
        gate.releasePreroll { piece, _ in samples += piece }
        return samples
    }

    func testWithoutATriggerOrACommandTheTakeStartsAtItsFirstFrame() {
        var gate = StartGate(channels: 2, prerollFrames: 0, triggerLevel: nil, waitsForStart: false)
        let first = cycle(at: 7_000, value: 0)
        XCTAssertEqual(admit(&gate, first), 0)
        XCTAssertEqual(open(&gate, first, offset: 0), StartGate.Opening(firstFrameTime: 7_000, prerollFrames: 0))
        XCTAssertEqual(preroll(&gate), [])
    }

    func testTheTriggerOpensAtTheFirstSampleAtItsLevelWithThePrerollBeforeIt() {
        var gate = StartGate(channels: 2, prerollFrames: 100, triggerLevel: 0.5, waitsForStart: false)
        XCTAssertNil(admit(&gate, cycle(at: 1_000, value: 0.1)), "below the level: kept as pre-roll")
        // The right channel of frame 10 reaches the level (its magnitude: a negative sample counts).
        let loud = cycle(at: 1_064, value: 0.2, loud: [(10, 1, -0.5), (20, 0, 0.9)])
        XCTAssertEqual(admit(&gate, loud), 10)
        let opening = open(&gate, loud, offset: 10)
        // 64 frames kept and the 10 before the trigger: 74, less than the 100 asked for.
        XCTAssertEqual(opening, StartGate.Opening(firstFrameTime: 1_000, prerollFrames: 74))
        XCTAssertEqual(preroll(&gate), [Float](repeating: 0.1, count: 128) + [Float](repeating: 0.2, count: 20))
        XCTAssertEqual(preroll(&gate), [], "handed on once")
    }

    func testThePrerollIsTheNewestFramesItAsksFor() {
        var gate = StartGate(channels: 1, prerollFrames: 48, triggerLevel: 0.5, waitsForStart: false)
        XCTAssertNil(admit(&gate, cycle(at: 0, channels: 1, value: 0.1)))
        XCTAssertNil(admit(&gate, cycle(at: 64, channels: 1, value: 0.2)))
        let loud = cycle(at: 128, channels: 1, value: 0.3, loud: [(16, 0, 0.7)])
        XCTAssertEqual(admit(&gate, loud), 16)
        XCTAssertEqual(open(&gate, loud, offset: 16), StartGate.Opening(firstFrameTime: 128 + 16 - 48, prerollFrames: 48))
        XCTAssertEqual(preroll(&gate), [Float](repeating: 0.2, count: 32) + [Float](repeating: 0.3, count: 16))
    }

    func testTheStartCommandOpensAtItsFrame() {
        var gate = StartGate(channels: 2, prerollFrames: 0, triggerLevel: nil, waitsForStart: true)
        let armed = cycle(at: 1_064, value: 0.1)
        XCTAssertNil(admit(&gate, armed), "no command yet")
        XCTAssertEqual(admit(&gate, armed, requestedFrame: 1_100), 36, "within the cycle")
        XCTAssertEqual(admit(&gate, armed, requestedFrame: 900), 0, "before it: at its first frame")
        XCTAssertNil(admit(&gate, armed, requestedFrame: 1_128), "the next cycle's first frame")
        // Across the frame counter's wrap.
        let wrapping = cycle(at: UInt32.max - 9, value: 0.1)
        XCTAssertEqual(admit(&gate, wrapping, requestedFrame: 5), 15)
    }

    func testAGapWhileArmedIsSilenceInThePrerollAndARestartEmptiesIt() {
        var gate = StartGate(channels: 1, prerollFrames: 100, triggerLevel: nil, waitsForStart: true)
        XCTAssertNil(admit(&gate, cycle(at: 0, channels: 1, value: 0.2)))
        gate.noteGap(frames: 20, serverRestarted: false)
        let after = cycle(at: 84, channels: 1, value: 0.4)
        XCTAssertEqual(admit(&gate, after, requestedFrame: 84), 0)
        XCTAssertEqual(open(&gate, after, offset: 0), StartGate.Opening(firstFrameTime: 0, prerollFrames: 84))
        XCTAssertEqual(preroll(&gate), [Float](repeating: 0.2, count: 64) + [Float](repeating: 0, count: 20))

        var restarted = StartGate(channels: 1, prerollFrames: 100, triggerLevel: nil, waitsForStart: true)
        XCTAssertNil(admit(&restarted, cycle(at: 0, channels: 1, value: 0.2)))
        restarted.noteGap(frames: 20, serverRestarted: true)
        let fresh = cycle(at: 500, channels: 1, value: 0.4)
        XCTAssertEqual(admit(&restarted, fresh, requestedFrame: 500), 0)
        XCTAssertEqual(open(&restarted, fresh, offset: 0), StartGate.Opening(firstFrameTime: 500, prerollFrames: 0),
                       "what was kept before a restart does not lead up to the take")
        XCTAssertEqual(preroll(&restarted), [])
    }
}
