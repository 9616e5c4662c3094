import Foundation
import JackAudioSession
import JackKit
import JackRuntime
import JackTestSupport
import Measurement
import Recording
import SoundFile
import XCTest

/// A client whose ports are being recorded dies and comes back: the take
/// goes on, and the silence while it was away is logged with its length and
/// the ports' names. Real processes: `jas play` as the source, SIGKILLed.
final class RecordSourceLostTests: JackTestCase {
    func testASourceThatDiesAndReturnsIsALoggedGapOfTheRightLength() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func startSource() throws -> Process {
            let player = Process()
            player.executableURL = URL(fileURLWithPath: jas)
            player.arguments = ["play", "--server", server.name, "--name", "source", "--port", "loopback:playback_1",
                                "--mix", "--signal", "noise"]
            player.standardOutput = FileHandle.nullDevice
            player.standardError = FileHandle.nullDevice
            try player.run()
            return player
        }
        var source = try startSource()
        defer { if source.isRunning { source.terminate() } }
        let probe = try Client(name: "probe", serverName: server.name)
        defer { probe.close() }
        XCTAssertTrue(waitUntil(timeout: 10) { probe.port(named: "source:out_1") != nil })
        let recorder = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "source:out_*",
                                                               "--output", "\(folder)/take.wav", "--for", "8"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        XCTAssertTrue(waitUntil(timeout: 20) { recorder.framesWritten >= 72_000 }, "1.5 s recorded: \(recorder.objects.suffix(2))")
        kill(source.processIdentifier, SIGKILL)
        source.waitUntilExit()
        let killedAt = Date()
        XCTAssertTrue(waitUntil(timeout: 5) { recorder.event("source_lost") != nil }, "\(recorder.objects)")
        usleep(1_100_000)
        source = try startSource()
        XCTAssertTrue(waitUntil(timeout: 10) { probe.port(named: "source:out_1") != nil })
        let backAt = Date()
        let summary = try XCTUnwrap(recorder.finish(timeout: 20), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)

        let lost = try XCTUnwrap(recorder.event("source_lost"))
        XCTAssertEqual(lost["ports"] as? [String], ["source:out_1"])
        let log = logEvents("\(folder)/take.log")
        let gaps = log.filter { $0["event"] as? String == "gap" && $0["reason"] as? String == "source-lost" }
        XCTAssertEqual(gaps.count, 1, "\(log)")
        let gap = try XCTUnwrap(gaps.first)
        XCTAssertEqual(gap["ports"] as? [String], ["source:out_1"])
        XCTAssertEqual(gap["returned"] as? Bool, true)
        XCTAssertEqual(gap["at_frame"] as? Int, lost["at_frame"] as? Int)
        // Away from the kill until the new ports were connected: at least the
        // 1.1 s wait, at most until the test saw them back, and a little more
        // (the session reconnects 50 ms after a registration; checked every 20 ms).
        let seconds = Double(try XCTUnwrap(gap["frames"] as? Int)) / 48000
        print(String(format: "source lost: gap %.3f s; the test saw it away %.3f s", seconds, backAt.timeIntervalSince(killedAt)))
        XCTAssertGreaterThanOrEqual(seconds, 1.1 - 0.05, "\(gap)")
        XCTAssertLessThanOrEqual(seconds, backAt.timeIntervalSince(killedAt) + 0.3, "\(gap)")
        // The summary counts it with the other gaps (a client killed mid-cycle costs the graph xruns too).
        XCTAssertEqual(summary["gaps"] as? Int, log.filter { $0["event"] as? String == "gap" }.count, "\(summary) \(log)")
        XCTAssertEqual(summary["frames_written"] as? Int, 8 * 48000, "the take is whole: \(summary)")

        // Capture goes on bit-exact from the new ports: after the gap the file
        // holds the new player's noise, sample after sample, from wherever in
        // its sequence the reconnection caught it. A later gap (the server
        // skipped cycles: nobody ran them, the player's sequence did not move
        // on) is silence in the file: the comparison finds its place again after it.
        let recorded = try SoundFileReader(path: "\(folder)/take.wav").readAll()
        let gapEnd = try XCTUnwrap(gap["at_frame"] as? Int) + (try XCTUnwrap(gap["frames"] as? Int))
        let match = PlayedNoise.match(recorded, from: gapEnd, gaps: gapRanges(log), searchAhead: 2 * 48000)
        XCTAssertEqual(match.unmatched, [], "samples from these frames on are none of jas play's")
        let (compared, differing) = (match.compared, match.differing + match.silent)
        let xruns = try XCTUnwrap(summary["xruns"] as? Int)
        print("after the return: \(compared) samples compared, \(differing) differ; xruns \(xruns)")
        // A late client (an xrun) may have a period read half-written; without one, nothing differs.
        XCTAssertLessThanOrEqual(differing, xruns * 2 * 256, "\(summary)")
        XCTAssertLessThanOrEqual(match.jumps.count, 2 * xruns, "the noise went on from elsewhere at \(match.jumps)")
        XCTAssertGreaterThan(compared, 48000 * 3)
    }

    func testStopOnSourceLostEndsTheTake() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let player = Process()
        player.executableURL = URL(fileURLWithPath: jas)
        player.arguments = ["play", "--server", server.name, "--name", "source", "--port", "loopback:playback_1", "--mix"]
        player.standardOutput = FileHandle.nullDevice
        player.standardError = FileHandle.nullDevice
        try player.run()
        defer { if player.isRunning { player.terminate() } }
        let probe = try Client(name: "probe", serverName: server.name)
        defer { probe.close() }
        XCTAssertTrue(waitUntil(timeout: 10) { probe.port(named: "source:out_1") != nil })
        let recorder = try RecordProcess(jas: jas, arguments: ["--server", server.name, "--ports", "source:out_*",
                                                               "--output", "\(folder)/take.wav", "--stop-on-source-lost"])
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("started") != nil }, recorder.stderr)
        XCTAssertTrue(waitUntil(timeout: 20) { recorder.framesWritten >= 48_000 }, "1 s recorded: \(recorder.objects.suffix(2))")
        kill(player.processIdentifier, SIGKILL)
        let summary = try XCTUnwrap(recorder.finish(timeout: 10), "the take ends by itself: \(recorder.stderr)")
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        XCTAssertEqual(summary["stop_reason"] as? String, "source lost: source:out_1")
        let log = logEvents("\(folder)/take.log")
        XCTAssertEqual(log.last?["event"] as? String, "stopped")
        XCTAssertEqual(log.last?["reason"] as? String, "source lost: source:out_1")
        let written = try XCTUnwrap(summary["frames_written"] as? Int)
        XCTAssertEqual(Int(try SoundFileReader(path: "\(folder)/take.wav").frames), written, "the file holds the whole take")
        XCTAssertGreaterThan(written, 48000 / 2)
    }

    /// What the source watch waits for before it looks its ports up again
    /// (`SourceWatch.LookSchedule`): every registration and connection JACK
    /// reports to the session's client moves `graphChangeCount`. A source
    /// that goes unregisters its ports, which JACK disconnects first.
    func testEveryRegistrationAndConnectionMovesTheSessionsGraphCount() throws {
        let server = try startServer(period: 256)
        let session = AudioSession(clientName: "counted", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.record)
        try session.setActive(true)
        let probe = try Client(name: "probe", serverName: server.name)
        defer { probe.close() }
        try probe.activate()
        func moves(_ what: String, _ change: () throws -> Void) rethrows {
            let before = session.graphChangeCount
            try change()
            XCTAssertTrue(waitUntil(timeout: 5) { session.graphChangeCount > before }, "\(what): the count stayed \(before)")
        }
        let port = try probe.registerPort("out", flags: .output)
        try moves("a port registered") { _ = try probe.registerPort("out_2", flags: .output) }
        try moves("a connection made") { try probe.connect("probe:out", to: "loopback:playback_1") }
        try moves("a connection broken") { try probe.disconnect("probe:out", from: "loopback:playback_1") }
        try moves("a port gone") { try probe.unregisterPort(port) }
    }
}
