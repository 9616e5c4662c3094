import AudioSession
import JackTestSupport
import Measurement
import XCTest

/// Test 1: the measurement path is bit-exact through jackd's loopback ports,
/// delayed by exactly one period.
final class LoopbackBitExactTests: JackTestCase {
    func testTenSecondsBitExactAtPeriod64() throws {
        try checkBitExact(period: 64)
    }

    func testTenSecondsBitExactAtPeriod256() throws {
        try checkBitExact(period: 256)
    }

    private func checkBitExact(period: Int) throws {
        let server = try startServer(period: period)
        var check = LoopbackCheck(serverName: server.name)
        check.duration = 10
        // At 64 frames on two cores (and under RealtimeSanitizer) xruns spoil
        // many 10 s runs; a spoilt run is run again, the comparison unchanged.
        check.maximumAttempts = period < 128 ? 6 : 3
        let result = try check.run()
        XCTAssertEqual(result.periodFrames, period)
        XCTAssertEqual(result.measuredRoundtripFrames, period, "the -L loopback delays by exactly one period")
        XCTAssertEqual(result.mismatches, 0)
        XCTAssertTrue(result.bitExact, "\(result)")
        // Ten seconds on two channels, less the first period and any cycles an xrun cost.
        XCTAssertGreaterThan(result.samplesCompared, 2 * 48000 * 10 * 99 / 100)
    }

    func testAnalysisDetectsACorruptedSample() throws {
        // The analysis must be able to fail: one flipped bit in the capture is found.
        let recorder = RealtimeLoopbackRecorder(signal: TestSignal(seed: 7), channels: 1, period: 4, cycles: 4)
        let input = UnsafeMutablePointer<Float>.allocate(capacity: 4)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 4)
        defer { input.deallocate(); output.deallocate() }
        var previous = [Float](repeating: 0, count: 4)
        recorder.arm()
        for cycle in 0..<4 {
            for frame in 0..<4 { input[frame] = previous[frame] }
            if cycle == 2 { input[2] = Float(bitPattern: input[2].bitPattern ^ 1) }
            withUnsafeProcessCycle(inputs: [input], outputs: [output], frames: 4, start: UInt32(1000 + 4 * cycle)) {
                recorder.process($0)
            }
            previous = (0..<4).map { output[$0] }
        }
        let analysis = LoopbackAnalysis.analyse(recorder, maximumDelay: 8)
        XCTAssertEqual(analysis.delayFrames, 4)
        XCTAssertEqual(analysis.mismatches, 1)
        XCTAssertFalse(analysis.isBitExact)
    }
}

/// Runs `body` with a process cycle over caller-owned buffers.
func withUnsafeProcessCycle(inputs: [UnsafeMutablePointer<Float>], outputs: [UnsafeMutablePointer<Float>], frames: Int,
                            start: UInt32, _ body: (RenderCycle) -> Void) {
    inputs.withUnsafeBufferPointer { inputBuffers in
        outputs.withUnsafeBufferPointer { outputBuffers in
            body(RenderCycle(frameCount: frames, inputs: inputBuffers, outputs: outputBuffers, cycleStartFrame: start))
        }
    }
}
