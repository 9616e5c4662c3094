import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// `jas record` killed with SIGKILL leaves a file that libsndfile and sox
/// open, holding at least everything up to one second before the kill, bit
/// for bit (jack_capture's header says zero length after the same).
final class RecordCrashTests: JackTestCase {
    func testSIGKILLLeavesFilesThatOpenWithAllButTheLastSecond() throws {
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 5)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (ext, bits) in [("wav", "float"), ("rf64", "float"), ("w64", "float"), ("wav", "24")] {
            let path = "\(folder)/killed-\(bits)-\(ext).\(ext)"
            let recorder = try RecordProcess(jas: jas, arguments: [
                "--server", server.name, "--ports", "signal-sender:out_*", "--output", path, "--bits", bits])
            XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
            let started = Date()
            let first = UInt32(try XCTUnwrap(recorder.event("started")?["first_frame_time"] as? Int))
            // Kill at a moment unrelated to the half-second header rhythm.
            usleep(UInt32(2_000_000 + Int.random(in: 0..<500_000)))
            let killedAfter = Date().timeIntervalSince(started)
            kill(recorder.process.processIdentifier, SIGKILL)
            recorder.process.waitUntilExit()
            XCTAssertEqual(recorder.process.terminationReason, .uncaughtSignal)
            // The next recorder starts once jackd has dropped the killed client: while
            // it does, a synchronous server can leave a cycle of the sender unheard.
            let client = try XCTUnwrap(sender.session.client)
            XCTAssertTrue(waitUntil(timeout: 10) { client.portNames(matching: "^jas-record:").isEmpty })

            let reader = try SoundFileReader(path: path)
            let frames = Int(reader.frames)
            XCTAssertGreaterThanOrEqual(Double(frames), (killedAfter - 1) * 48000, "\(ext) \(bits): \(frames) frames")
            XCTAssertLessThanOrEqual(Double(frames), (killedAfter + 0.5) * 48000)
            let soxInfo = try run(["sox", "--i", "-s", path])
            XCTAssertEqual(soxInfo.status, 0, soxInfo.output)
            XCTAssertEqual(Int(soxInfo.output.split(separator: "\n").last ?? ""), frames, soxInfo.output)
            let samples = reader.readAll()
            XCTAssertEqual(samples.count, frames * 2)
            if bits == "float" {
                let result = sender.compare(samples, channels: 2, firstFrameTime: first, period: 256)
                XCTAssertEqual(result.sameCycle, result.total, "\(ext): \(result.firstMismatch ?? "")")
            } else {
                // 24-bit: the signal within one step of 2^-23 (libsndfile rounds), never silent.
                var worst: Float = 0
                var firstWrong: (frame: Int, channel: Int, got: Float, sent: Float)?
                for frame in 0..<frames {
                    for channel in 0..<2 {
                        let sent = sender.sample(channel: channel, frame: first &+ UInt32(frame))
                        let error = abs(samples[frame * 2 + channel] - sent)
                        if error > 1.0 / Float(1 << 22) && firstWrong == nil {
                            firstWrong = (frame, channel, samples[frame * 2 + channel], sent)
                        }
                        worst = max(worst, error)
                    }
                }
                XCTAssertLessThanOrEqual(worst, 1.0 / Float(1 << 22), "\(ext) 24-bit; first wrong: \(String(describing: firstWrong))")
            }
            print("\(ext) \(bits): killed after \(String(format: "%.2f", killedAfter)) s, file holds "
                  + "\(String(format: "%.2f", Double(frames) / 48000)) s")
        }
    }

    func testSIGKILLedFLACStillDecodes() throws {
        // FLAC has no header to rewrite: libFLAC's stream info says "length
        // unknown" until the end, and decoders read the frames that are there.
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 6, onTwentyFourBitGrid: true)
        defer { withExtendedLifetime(sender) {} }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/killed.flac"
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "signal-sender:out_*", "--output", path])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        let started = Date()
        usleep(2_300_000)
        let killedAfter = Date().timeIntervalSince(started)
        kill(recorder.process.processIdentifier, SIGKILL)
        recorder.process.waitUntilExit()
        let stat = try run(["sox", path, "-n", "stat"])
        let line = try XCTUnwrap(stat.output.split(separator: "\n").first { $0.hasPrefix("Samples read:") }, stat.output)
        let samples = Double(line.split(separator: " ").last ?? "") ?? 0
        XCTAssertGreaterThanOrEqual(samples / 2, (killedAfter - 1) * 48000, stat.output)
    }
}
