import Foundation
import JackTestSupport
import SoundFile
import XCTest

/// A logger's time end to end, against a reference the test builds itself:
/// a jackd whose sample clock runs 2,000 ppm fast (its monotonic clocks
/// scaled by the shim, from origins the test read, so a frame's true time is
/// known in closed form), `clickprobe` writing a click that names its JACK
/// frame ten times a second, and `jas record --rotate 5s` of that port. Each
/// file's first frame is found from its first click; its true wall time is
/// the click frame's, from the server's own cycle times with the shim's scale
/// taken off. It must be within 3 ms of the file's 5 s boundary, and of the
/// start the manifest gives, xruns or not (the suite's own load, the dummy
/// driver's time lost without frames). A recorder that took a file's time as
/// the take's start plus its frames at the nominal rate would be 10 ms off
/// per file here.
///
/// At a 256-frame period (here). Measured while this was written, the worst
/// file of a run: 0.08 to 0.17 ms idle, 0.69 beside a busy core, 1.46 ms in
/// one CI run with one xrun; at 64 frames with 40 to 220 xruns in 32 s, 0.9
/// to 5 ms (docs/LOGGER.md: the recorder's arrival-time mapping is off by that, not
/// the reference). 1 ms is not met every time; the bound is what is. A clicker that clicks at the wall
/// clock's seconds from its own wake-up, through the `-L` loopback, had
/// seemed to show 2 to 55 ms: a period of wake-up jitter, the loopback's
/// repeated periods and the reference's own clock (jackd2 times its cycles
/// on CLOCK_MONOTONIC_RAW, not CLOCK_MONOTONIC).
final class RecordTimeUnderXrunsTests: JackTestCase {
    func testFileStartsAreWithinThreeMillisecondsOfTheTruthOnAFastCardThatXruns() throws {
        let clock = DriftingServerClock(ppm: 2000)
        let server = try startServer(period: 256, environment: clock.environment(shim: try HookLibrary.driftingClock.path()))
        let probe = try ClickProbe(server: server.name, every: 4800)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let record = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "clickprobe:out", "--rotate", "5s", "--for", "22", "--utc",
            "--output", "\(folder)/%H%M%S.wav"])
        let summary = try XCTUnwrap(record.finish(timeout: 90), record.stderr)
        let cycles = probe.stop()
        XCTAssertEqual(record.process.terminationStatus, 0, record.stderr)
        let paths = try XCTUnwrap(summary["paths"] as? [String])
        XCTAssertGreaterThanOrEqual(paths.count, 4, "\(paths)")
        let manifestPath = try XCTUnwrap(summary["manifest_path"] as? String)
        let opened = jsonLines(try String(contentsOfFile: manifestPath, encoding: .utf8)).filter { $0["event"] as? String == "opened" }
        let firstFrames = cycles.map(\.frames)
        var report: [String] = []
        for path in paths.dropFirst() {
            let name = (path as NSString).lastPathComponent
            let claimed = try XCTUnwrap(opened.first { $0["path"] as? String == name }?["start_utc"] as? Double, name)
            let samples = try SoundFileReader(path: path).readAll()
            // The take's last file ends with its 22 s, wherever that falls in a 5 s file: one shorter than the
            // clicks' interval may hold none (a take begun 3.0x s past a boundary ends 0.0x s into its last file).
            if path == paths.last && samples.count < probe.every { continue }
            let index = try XCTUnwrap(samples.firstIndex { $0 != 0 }, "\(name) holds no click")
            let click = ClickProbe.clickIndex(amplitude: samples[index])
            // The click frames that amplitude names; the one whose time fits the file's start.
            let first = try XCTUnwrap(firstFrames.first), last = try XCTUnwrap(firstFrames.last)
            let candidates = stride(from: Int(first) / probe.every * probe.every, through: Int(last), by: probe.every)
                .filter { ($0 / probe.every) % 255 == click }
                .compactMap { frame in clock.trueUTC(ofFrame: UInt32(frame), cycles: cycles).map { (frame, $0) } }
            let (_, clickTime) = try XCTUnwrap(candidates.min { abs($0.1 - claimed) < abs($1.1 - claimed) }, name)
            // The frames before the click in the file, at the card's own rate.
            let start = clickTime - Double(index) / 48000 / (1 + clock.ppm / 1e6)
            let offBoundary = start - (start / 5).rounded() * 5
            report.append(String(format: "%@: %+.3f ms off its boundary, the manifest %+.3f ms off the truth", name,
                                 offBoundary * 1000, (claimed - start) * 1000))
            XCTAssertLessThan(abs(offBoundary), 0.003, "\(name) starts \(offBoundary * 1000) ms off its 5 s boundary")
            XCTAssertLessThan(abs(claimed - start), 0.003, "\(name): the manifest says \((claimed - start) * 1000) ms off the truth")
        }
        print("RecordTimeUnderXrunsTests (xruns \(summary["xruns"] ?? "?"), gaps \(summary["gaps"] ?? "?")): "
              + report.joined(separator: "; "))
    }
}
