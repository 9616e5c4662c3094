import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// A take started while `jack_frame_time` lags the cycles. libjack's
/// `jack_frame_time` extrapolates from the current cycle through a filter
/// that follows the cycles' wake-ups; after jackd stalled (here: stopped for
/// a fifth of a second, as a loaded machine does to a dummy jackd without
/// real-time scheduling) the filter overshoots and reads tens of periods
/// behind `jack_last_frame_time` for a second or more. A take that placed its
/// start by it began before the cycle whose graph had its last ports'
/// connections, and wrote their first periods as silence heard (CI: the last
/// of 16 channels at 64 frames, RecordBitExactTests).
final class RecordFrameTimeLagTests: JackTestCase {
    func testATakeStartedWhileTheFrameTimeLagsHearsEveryChannelFromItsFirstFrame() throws {
        let period = 64, channels = 16
        let server = try startServer(loopbackChannels: channels, period: period, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: channels, seed: 17)
        defer { sender.session.close() }
        let probe = try Client(name: "frame-time-probe", serverName: server.name)
        defer { probe.close() }
        /// How far `jack_frame_time` is ahead of the current cycle's frame time, in periods.
        func lead() -> Double { Double(Int32(bitPattern: probe.frameTime &- probe.cycleFrameTime)) / Double(period) }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }

        var tested = 0
        for attempt in 1...6 where tested < 2 {
            // The stimulus: jackd stopped for 0.2 s (a fixed time, not a wait).
            kill(server.pid, SIGSTOP)
            usleep(200_000)
            kill(server.pid, SIGCONT)
            // The condition: the filter's overshoot, four periods behind or more.
            guard waitUntil(timeout: 15, { lead() <= -4 }) else { continue }
            var configuration = Recorder.Configuration(outputPath: "\(folder)/take-\(attempt).wav")
            configuration.serverName = server.name
            configuration.portPatterns = ["loopback:capture_*"]
            configuration.format = RecordingFormat(container: .wav, sampleFormat: .float32)
            configuration.duration = 0.5
            let recorder = Recorder(configuration: configuration)
            try recorder.prepare()
            let leadAtStart = lead()
            defer { recorder.stop() }
            XCTAssertTrue(recorder.waitUntilFinished(timeout: 30), "attempt \(attempt): the take did not end")
            recorder.stop()
            // Only a take whose start was placed while the lag lasted tests anything.
            guard leadAtStart <= -2 else { continue }
            tested += 1
            let summary = recorder.summary
            let first = try XCTUnwrap(summary.firstFrameTime)
            let samples = try SoundFileReader(path: try XCTUnwrap(summary.paths.first)).readAll()
            XCTAssertEqual(samples.count, 24000 * channels)
            let gaps = gapRanges(logEvents(try XCTUnwrap(summary.logPath))).map { (at: $0.lowerBound, frames: $0.count) }
            let result = sender.compare(samples, channels: channels, firstFrameTime: first, period: period, gaps: gaps)
            print("attempt \(attempt): frame time \(leadAtStart) periods ahead of the cycles at the start; "
                  + "\(result.mismatched) of \(result.total) channel-periods match nothing")
            XCTAssertEqual(result.mismatched, 0, "attempt \(attempt), frame time \(leadAtStart) periods ahead: "
                           + (result.firstMismatch ?? ""))
        }
        XCTAssertGreaterThan(tested, 0, "jackd's frame time never lagged its cycles when a take started: nothing was tested")
    }
}
