import Foundation
import JackTestSupport
import Recording
import XCTest

/// Where a take's log puts an xrun. The session says xruns at most four
/// times a second, so an xrun's place must be taken when it comes, not when
/// the report is read: read then, it was up to a quarter of a second (12,000
/// frames) after the xrun, and a log's xrun and the gap it made looked unrelated.
final class RecordXrunTests: JackTestCase {
    func testAnXrunIsLoggedAtTheCycleItCameInNotAtItsReport() throws {
        let period = 256
        let server = try startServer(period: period)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = Recorder.Configuration(outputPath: "\(folder)/take.wav")
        configuration.serverName = server.name
        configuration.portPatterns = ["loopback:capture_1"]
        configuration.duration = 3
        let recorder = Recorder(configuration: configuration)
        try recorder.prepare()
        defer { recorder.stop() }
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.progress().framesWritten >= 48000 }, "the take did not start")
        // A server stopped for 100 ms is late for its next cycle: an xrun. (A
        // dummy jackd then goes on from the late cycle: the lost time has no
        // frames, so the take has no gap there; a driver whose frame time
        // jumps leaves one, and the xrun is then after it.)
        let writtenBeforeTheStop = Int(recorder.progress().framesWritten)
        kill(server.pid, SIGSTOP)
        usleep(100_000)
        kill(server.pid, SIGCONT)
        XCTAssertTrue(recorder.waitUntilFinished(timeout: 30), "the take did not end")
        recorder.stop()

        let log = logEvents(try XCTUnwrap(recorder.summary.logPath))
        let xruns = log.filter { $0["event"] as? String == "xrun" }.compactMap { $0["at_frame"] as? Int }
        // Written to disk lags the cycles by the disk thread's wake-up; on a
        // loaded machine the stop's xrun may share its report with one that
        // came up to 250 ms before it, and is then logged at that one.
        let earliest = writtenBeforeTheStop - 12_000 - 4 * period
        let skipped = gapRanges(log).filter { $0.lowerBound >= writtenBeforeTheStop }.map(\.count).reduce(0, +)
        let latest = writtenBeforeTheStop + skipped + 4800
        // Placed where its report was read, it was 12,000 to 15,000 frames after the stop.
        XCTAssertTrue(xruns.contains { (earliest...latest).contains($0) },
                      "no xrun logged within 0.1 s of the frames written before the stop (\(writtenBeforeTheStop)); "
                      + "xruns at \(xruns): \(log)")
    }
}
