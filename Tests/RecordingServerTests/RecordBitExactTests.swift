import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// A seeded signal recorded by `jas record` (a separate process) comes back
/// bit-identical in 32-bit float: through the loopback at periods 64 and
/// 1024, for 2 and 16 channels, in one file and one file per channel; and
/// straight from the sender's ports.
///
/// Through jackd's `-L` loopback with a sender in another client, each
/// channel's period arrives either in the cycle it was sent or one cycle
/// later, as jackd happens to order the loopback and the sender (seen at
/// every period; with an asynchronous server also two cycles late, so these
/// servers run synchronously, `-S`). Each channel-period must equal one of the
/// two, whole and bit for bit, or (rarely, counted, at most 1 %) be made of
/// the two frame by frame where jackd's loopback copied a buffer that the
/// sender was still writing (either one ahead, or each in turn); from the
/// sender's own ports every one must be the same cycle's.
final class RecordBitExactTests: JackTestCase {
    func testTwoChannelsAtPeriod64() throws {
        try checkBitExact(period: 64, channels: 2)
    }

    func testSixteenChannelsAtPeriod1024() throws {
        try checkBitExact(period: 1024, channels: 16)
    }

    func testSixteenChannelsAtPeriod64PerChannelFiles() throws {
        try checkBitExact(period: 64, channels: 16, perChannel: true)
    }

    func testTwoChannelsAtPeriod1024InRF64() throws {
        try checkBitExact(period: 1024, channels: 2, extension: "rf64")
    }

    func testStraightFromTheSendersPortsEveryPeriodIsTheSameCycle() throws {
        try checkBitExact(period: 256, channels: 4, ports: "signal-sender:out_*")
    }

    private func checkBitExact(period: Int, channels: Int, perChannel: Bool = false, extension ext: String = "wav",
                               ports: String = "loopback:capture_*") throws {
        let server = try startServer(loopbackChannels: channels, period: period, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: channels, seed: UInt64(period + channels))
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/take.\(ext)"
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", ports, "--output", path, "--bits", "float", "--for", "3"]
            + (perChannel ? ["--per-channel"] : []))
        let summary = try XCTUnwrap(recorder.finish(), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertEqual(summary["frames_written"] as? Int, 3 * 48000)
        XCTAssertEqual(summary["channels"] as? Int, channels)
        XCTAssertEqual(summary["overruns"] as? Int, 0)
        let first = UInt32(try XCTUnwrap(summary["first_frame_time"] as? Int))
        let paths = try XCTUnwrap(summary["paths"] as? [String])
        XCTAssertEqual(paths.count, perChannel ? channels : 1)
        var samples: [Float]
        if perChannel {
            let files = try paths.map { try SoundFileReader(path: $0).readAll() }
            XCTAssertTrue(files.allSatisfy { $0.count == 3 * 48000 })
            samples = [Float](repeating: 0, count: 3 * 48000 * channels)
            for (channel, file) in files.enumerated() {
                for frame in file.indices { samples[frame * channels + channel] = file[frame] }
            }
        } else {
            let reader = try SoundFileReader(path: paths[0])
            XCTAssertEqual(reader.channels, channels)
            XCTAssertEqual(reader.sampleRate, 48000)
            samples = reader.readAll()
            XCTAssertEqual(samples.count, 3 * 48000 * channels)
        }
        // Cycles the server skipped (xruns on this loaded machine) are logged gaps.
        let gaps = logEvents(try XCTUnwrap(summary["log_path"] as? String))
            .filter { $0["event"] as? String == "gap" }
            .map { (at: $0["at_frame"] as! Int, frames: $0["frames"] as! Int) }
        XCTAssertEqual(gaps.count, summary["gaps"] as? Int)
        let result = sender.compare(samples, channels: channels, firstFrameTime: first, period: period, gaps: gaps)
        print("\(channels) ch at \(period): of \(result.total) channel-periods \(result.sameCycle) same cycle, "
              + "\(result.previousCycle) one cycle later, \(result.torn) torn, \(result.repeated) repeated, "
              + "\(result.silentGaps) in \(gaps.count) gap(s), "
              + "\(result.withoutSource) after a gap")
        XCTAssertEqual(result.mismatched, 0, result.firstMismatch ?? "")
        XCTAssertGreaterThan(result.sameCycle + result.previousCycle, result.total * 9 / 10)
        XCTAssertLessThanOrEqual(result.torn, result.total / 100)
        XCTAssertLessThanOrEqual(result.repeated, result.total / 100)
        if !ports.hasPrefix("loopback:") { XCTAssertEqual(result.sameCycle, result.total) }
    }
}
