import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
import Synchronization
import XCTest

/// Sessions in different processes sharing one jackd: `jas play` and
/// `jas interrupt` run as their own processes; what they do to each other is
/// read from their JSON events and heard on the server's loopback ports.
final class InterruptionTests: JackTestCase {
    /// A `jas play` process and the events it printed.
    final class Player {
        let process = Process()
        let lines: LineCollector
        let name: String

        init(jas: String, server: String, name: String, port: String, arguments: [String] = []) throws {
            self.name = name
            process.executableURL = URL(fileURLWithPath: jas)
            // 750 Hz: exactly 64 samples a cycle at 48 kHz, so levels read steadily.
            process.arguments = ["play", "--server", server, "--name", name, "--port", port, "--frequency", "750",
                                 "--json"] + arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = errors
            lines = LineCollector(output)
            try process.run()
        }

        private let errors = Pipe()

        /// What it wrote to stderr (for failure messages; blocks while it runs and is silent).
        var diagnostics: String {
            String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
        }

        deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        func interruptions(_ type: String) -> [[String: Any]] {
            lines.objects.filter { $0["event"] as? String == "interruption" && $0["type"] as? String == type }
        }

        var started: Bool { lines.objects.contains { $0["event"] as? String == "routeChange" } }
    }

    /// RMS of a −20 dBFS-peak sine.
    let playing = -20 - 10 * log10(2.0)

    func player(_ server: LoopbackServer, _ name: String, port: Int, _ arguments: [String] = []) throws -> Player {
        let player = try Player(jas: jas, server: server.name, name: name, port: "loopback:playback_\(port)",
                                arguments: arguments)
        XCTAssertTrue(waitUntil { player.started }, "\(name) did not start")
        return player
    }

    func testLaterPlayerInterruptsAndNotifyLetsTheFirstResume() throws {
        let server = try startServer(period: 256)
        let probe = try LevelProbe(serverName: server.name, listeningTo: ["loopback:capture_1", "loopback:capture_2"])
        let first = try player(server, "A", port: 1)
        XCTAssertEqual(probe.levels()[0], playing, accuracy: 0.5)

        let second = try player(server, "B", port: 2, ["--for", "2", "--notify"])
        XCTAssertTrue(waitUntil { first.interruptions("began").count == 1 }, "\(first.lines.objects)")
        XCTAssertEqual(first.interruptions("began").first?["reason"] as? String, "default")
        let during = probe.levels()
        XCTAssertLessThan(during[0], -100, "the interrupted player is still heard")
        XCTAssertEqual(during[1], playing, accuracy: 0.5)
        XCTAssertTrue(second.interruptions("began").isEmpty)
        // A fell silent within a period of B's sound starting (both through the same loopback).
        let spans = probe.audibleSpans()
        let overlap = try XCTUnwrap(spans[0]).last - XCTUnwrap(spans[1]).first
        print("interrupted player still sounding after the interrupter started: \(overlap) frames (period 256)")
        XCTAssertLessThanOrEqual(overlap, 256, "the interrupted player went on for more than one period")

        XCTAssertTrue(waitUntil(timeout: 6) { first.interruptions("ended").count == 1 }, "\(first.lines.objects)")
        XCTAssertEqual(first.interruptions("ended").first?["options"] as? [String], ["shouldResume"])
        second.process.waitUntilExit()
        XCTAssertTrue(waitUntil { probe.levels(over: 0.1)[0] > playing - 0.5 }, "the first player did not resume")
    }

    func testWithoutNotifyTheEndCarriesNoShouldResume() throws {
        let server = try startServer(period: 256)
        let first = try player(server, "A", port: 1)
        let second = try player(server, "B", port: 2, ["--for", "1"])
        XCTAssertTrue(waitUntil(timeout: 6) { first.interruptions("ended").count == 1 }, "\(first.lines.objects)")
        XCTAssertEqual(first.interruptions("ended").first?["options"] as? [String], [])
        second.process.waitUntilExit()
    }

    /// A session in this process that plays `SoundSwitch`'s tone (the
    /// players' level) on `loopback:playback_<port>`: its arbitrations can be
    /// counted, so a check that it was not interrupted or ducked waits on them.
    func toneSession(_ server: LoopbackServer, _ name: String, port: Int, category: AudioSession.Category,
                     mode: AudioSession.Mode = .default, options: AudioSession.CategoryOptions = []) throws -> AudioSession {
        let session = AudioSession(clientName: name, serverName: server.name, recordConsent: .givenByCaller)
        try session.setCategory(category, mode: mode, options: options)
        session.setPreferredOutputPortNames(["loopback:playback_\(port)"])
        session.setRenderBlock(SoundSwitch().renderBlock)
        try session.setActive(true)
        return session
    }

    /// Its published state, as `observer` reads the registry.
    func published(_ client: String, by observer: AudioSession) -> SessionState? {
        observer.publishedSessions().first { $0.state.client == client }?.state
    }

    /// Waits until each of `sessions` has arbitrated twice more: anything it
    /// should have done on what it sees now has been done.
    func assertTwoMoreArbitrations(of sessions: [AudioSession], file: StaticString = #filePath, line: UInt = #line) {
        let seen = sessions.map(\.arbitrationsCompleted)
        XCTAssertTrue(waitUntil(timeout: 10) { zip(sessions, seen).allSatisfy { $0.arbitrationsCompleted >= $1 + 2 } },
                      "arbitrations: \(sessions.map(\.arbitrationsCompleted)) from \(seen)", file: file, line: line)
    }

    func testAmbientAndPlaybackMix() throws {
        let server = try startServer(period: 256)
        let probe = try LevelProbe(serverName: server.name, listeningTo: ["loopback:capture_1", "loopback:capture_2"])
        let ambient = try toneSession(server, "ambient", port: 1, category: .ambient)
        defer { ambient.close() }
        let music = try toneSession(server, "music", port: 2, category: .playback)
        defer { music.close() }
        XCTAssertTrue(waitUntil { probe.levels().allSatisfy { abs($0 - self.playing) < 0.5 } }, "\(probe.levels())")
        // Each has seen the other sounding: an interruption would have come by its second look since.
        XCTAssertTrue(waitUntil {
            [self.published("ambient", by: music), self.published("music", by: ambient)].allSatisfy { $0?.producingSound == true }
        })
        assertTwoMoreArbitrations(of: [ambient, music])
        for level in probe.levels() { XCTAssertEqual(level, playing, accuracy: 0.5) }
        XCTAssertEqual(ambient.interruptionsBegun, 0)
        XCTAssertEqual(music.interruptionsBegun, 0)
        XCTAssertTrue(ambient.isActive && music.isActive)
    }

    func testDuckingLowersByTheConfiguredLevelAndRestores() throws {
        let server = try startServer(period: 256)
        let probe = try LevelProbe(serverName: server.name, listeningTo: ["loopback:capture_1"])
        let music = try player(server, "music", port: 1)
        XCTAssertEqual(probe.levels()[0], playing, accuracy: 0.5)
        // Long enough to be still playing after a loaded machine's slow start and the checks below: with
        // 4 s, a loaded run read -34 for -35 (the prompt ending during the check, or a late cycle).
        let prompt = try player(server, "navigation", port: 2, ["--duck", "--duck-level=-12", "--for", "10"])
        // The player learns of the ducker from the registry and ramps its gain: wait for the level, not a time.
        XCTAssertTrue(waitUntil(timeout: 3.5) { abs(probe.levels(over: 0.1)[0] - (self.playing - 12)) < 0.5 },
                      "not ducked by 12 dB: \(probe.levels()[0])")
        // A cycle the player finished late may be heard before its gain was applied: read again while jackd says so.
        XCTAssertEqual(probe.levelsWithoutXruns(attempts: 8)[0], playing - 12, accuracy: 0.5)
        XCTAssertTrue(music.interruptions("began").isEmpty, "ducking must not interrupt")
        prompt.process.waitUntilExit()
        XCTAssertTrue(waitUntil(timeout: 3) { abs(probe.levels(over: 0.1)[0] - self.playing) < 0.5 },
                      "still ducked after the ducker ended: \(probe.levels()[0])")
        XCTAssertEqual(probe.levelsWithoutXruns()[0], playing, accuracy: 0.5)
    }

    /// A ducker in this test process, on `loopback:playback_2`, whose render
    /// block goes silent on demand (`talking`), with the duck-release `hold`.
    func silenceableDucker(_ server: LoopbackServer, hold: Double?) throws -> (ducker: AudioSession, talking: SoundSwitch) {
        let talking = SoundSwitch()
        let ducker = AudioSession(clientName: "prompt", serverName: server.name)
        try ducker.setCategory(.playback, options: .duckOthers)
        try ducker.setDuckReleaseHold(hold)
        ducker.setPreferredOutputPortNames(["loopback:playback_2"])
        ducker.setRenderBlock(talking.renderBlock)
        try ducker.setActive(true)
        return (ducker, talking)
    }

    func testDuckingEndsWhenTheDuckerGoesSilentBeyondItsHold() throws {
        let server = try startServer(period: 256)
        let probe = try LevelProbe(serverName: server.name, listeningTo: ["loopback:capture_1"])
        let music = try player(server, "music", port: 1)
        defer { withExtendedLifetime(music) {} }
        // A hold well above a late cycle: in a sharded run a ducker whose cycles stalled for over half a
        // second was taken for silent and released the music (−40.3 for −43.0 right after settling).
        let (ducker, talking) = try silenceableDucker(server, hold: 1.5)
        defer { ducker.close() }
        // The player learns of the ducker by polling (100–500 ms): wait for the level, not a fixed time.
        func settles(at level: Double, within seconds: Double) -> Bool {
            waitUntil(timeout: seconds) { abs(probe.levels()[0] - level) < 0.5 }
        }
        XCTAssertTrue(settles(at: playing - 20, within: 2))
        // Read again when jackd reports an xrun meanwhile (rehearsal 23: −40.8 for −43.0 right after settling,
        // with the ducker and the probe late).
        XCTAssertEqual(probe.levelsWithoutXruns(attempts: 8)[0], playing - 20, accuracy: 0.5, "xruns: \(probe.xruns)")
        talking.on.store(false, ordering: .relaxed)
        XCTAssertTrue(settles(at: playing, within: 5), "silent for longer than the hold and still ducking")
        XCTAssertTrue(ducker.isActive)
        // Median of the cycles: one stray cycle (a loaded player late) moves a 0.3 s mean by dB (CI: −39.4
        // for −43.0 over 0.3 s right after the level had settled).
        XCTAssertEqual(probe.levelsWithoutXruns(attempts: 8)[0], playing, accuracy: 0.5,
                       "silent for longer than the hold and still ducking, xruns: \(probe.xruns)")
        talking.on.store(true, ordering: .relaxed)
        XCTAssertTrue(settles(at: playing - 20, within: 2), "sound again and no ducking")
        XCTAssertEqual(probe.levelsWithoutXruns(attempts: 8)[0], playing - 20, accuracy: 0.5,
                       "sound again and no ducking, xruns: \(probe.xruns)")
    }

    /// "Note that ducking begins when you activate your app's audio session
    /// and ends when you deactivate the session." (Class Reference,
    /// AVAudioSessionCategoryOptionDuckOthers) Without a hold, a ducker that
    /// falls silent keeps the others lowered until it deactivates.
    func testDuckingLastsUntilDeactivationUnlessAHoldIsSet() throws {
        let server = try startServer(period: 256)
        let probe = try LevelProbe(serverName: server.name, listeningTo: ["loopback:capture_1"])
        let music = try player(server, "music", port: 1)
        defer { withExtendedLifetime(music) {} }
        XCTAssertNil(AudioSession(clientName: "unused", serverName: server.name).duckReleaseHold,
                     "the seeds' behaviour is the default")
        let (ducker, talking) = try silenceableDucker(server, hold: nil)
        defer { ducker.close() }
        XCTAssertTrue(waitUntil { abs(probe.levels()[0] - (self.playing - 20)) < 0.5 })
        talking.on.store(false, ordering: .relaxed)
        // Silent for longer than the session calls sounding (2 s, longer than any hold here), as it publishes:
        // still ducking, and the music, after two more looks of the ducker, still lowered.
        XCTAssertTrue(waitUntil(timeout: 10) { self.published("prompt", by: ducker)?.producingSound == false })
        XCTAssertEqual(published("prompt", by: ducker)?.ducking, true, "ducking ended before deactivation")
        assertTwoMoreArbitrations(of: [ducker])
        XCTAssertEqual(probe.levelsWithoutXruns(attempts: 8)[0], playing - 20, accuracy: 0.5, "ducking ended before deactivation")
        try ducker.setActive(false)
        XCTAssertTrue(waitUntil { abs(probe.levels()[0] - self.playing) < 0.5 }, "deactivation ends ducking")
    }

    func testMeasurementSessionIsNeverDucked() throws {
        let server = try startServer(period: 256)
        let probe = try LevelProbe(serverName: server.name, listeningTo: ["loopback:capture_1"])
        let meter = try toneSession(server, "measuring", port: 1, category: .playAndRecord, mode: .measurement,
                                    options: .mixWithOthers)
        defer { meter.close() }
        let navigation = try player(server, "navigation", port: 2, ["--duck"])
        defer { withExtendedLifetime(navigation) {} }
        // Once the ducker is published as ducking, the meter's next look at the registry would duck it.
        XCTAssertTrue(waitUntil { self.published("navigation", by: meter)?.ducking == true })
        assertTwoMoreArbitrations(of: [meter])
        XCTAssertEqual(probe.levels()[0], playing, accuracy: 0.01)
        XCTAssertEqual(published("measuring", by: meter)?.ducked, false)
        XCTAssertEqual(meter.interruptionsBegun, 0)
    }

    func testCallInterruptsMeasurementAndRecordingAndItsEndResumesThem() throws {
        let server = try startServer(period: 256)
        let measuring = AudioSession(clientName: "measuring", serverName: server.name, recordConsent: .givenByCaller)
        let recording = AudioSession(clientName: "recording", serverName: server.name, recordConsent: .givenByCaller)
        defer {
            measuring.close()
            recording.close()
        }
        try measuring.setCategory(.playAndRecord, mode: .measurement)
        try recording.setCategory(.record)
        try measuring.setActive(true)
        // Recording is non-mixable like measuring: activate it first so both stay active.
        try recording.setCategory(.playAndRecord, mode: .default, options: .mixWithOthers)
        try recording.setActive(true)
        let measuringEvents = EventRecorder(measuring)
        let recordingEvents = EventRecorder(recording)
        let call = try run([jas, "interrupt", "--server", server.name, "--as", "call", "--for", "1", "--json"])
        XCTAssertEqual(call.status, 0, call.output)
        XCTAssertTrue(call.output.contains("\"interrupted\":[\"measuring\",\"recording\"]")
                      || call.output.contains("\"interrupted\":[\"recording\",\"measuring\"]"), call.output)
        for events in [measuringEvents, recordingEvents] {
            XCTAssertTrue(waitUntil { events.interruptions.count == 2 }, "\(events.events)")
            XCTAssertEqual(events.interruptions.first?.type, .began)
            XCTAssertEqual(events.interruptions.first?.reason, .callStarted)
            XCTAssertEqual(events.interruptions.last?.type, .ended)
            XCTAssertEqual(events.interruptions.last?.options, .shouldResume)
        }
        try measuring.setActive(true)
        try recording.setActive(true)
        XCTAssertTrue(measuring.isActive && recording.isActive)
    }

    /// "If another active audio session has higher priority than yours (for
    /// example, a phone call), and neither audio session allows mixing,
    /// attempting to activate your audio session will fail." (Class Reference,
    /// setActive:error:) A session that mixes activates and plays along.
    func testDuringACallOnlyASessionThatMixesActivates() throws {
        let server = try startServer(period: 256)
        let call = AudioSession(clientName: "phone", serverName: server.name, recordConsent: .givenByCaller)
        defer { call.close() }
        try call.setCategory(.playAndRecord, mode: .voiceChat)
        call.setPriority(.call)
        try call.setActive(true)
        let refused = AudioSession(clientName: "music", serverName: server.name)
        defer { refused.close() }
        try refused.setCategory(.playback)
        XCTAssertThrowsError(try refused.setActive(true)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .insufficientPriority)
            XCTAssertTrue("\(error)".contains("phone"), "\(error)")
        }
        for (name, category, options) in [("game", Category.ambient, CategoryOptions()), ("radio", .playback, .mixWithOthers)] {
            let mixing = AudioSession(clientName: name, serverName: server.name)
            defer { mixing.close() }
            let events = EventRecorder(mixing)
            try mixing.setCategory(category, options: options)
            let seen = mixing.arbitrationsCompleted
            XCTAssertNoThrow(try mixing.setActive(true), "\(category) \(options.names) mixes: it may activate")
            // Two whole arbitrations after its activation (one runs at least every 2 s): it must still be playing.
            XCTAssertTrue(waitUntil(timeout: 10) { mixing.arbitrationsCompleted >= seen + 2 })
            XCTAssertTrue(mixing.isActive, "\(name) was interrupted by the call it started during")
            XCTAssertTrue(events.interruptions.isEmpty, "\(events.events)")
            XCTAssertTrue(call.isActive)
            try mixing.setActive(false)
        }
    }

    func testKilledInterrupterAndKilledDuckerReleaseTheOthers() throws {
        let server = try startServer(period: 256)
        let probe = try LevelProbe(serverName: server.name, listeningTo: ["loopback:capture_1"])
        let music = try player(server, "music", port: 1)
        let interrupter = try player(server, "interrupter", port: 2)
        XCTAssertTrue(waitUntil { music.interruptions("began").count == 1 })
        kill(interrupter.process.processIdentifier, SIGKILL)
        let killedAt = Date()
        XCTAssertTrue(waitUntil { music.interruptions("ended").count == 1 }, "\(music.lines.objects)")
        XCTAssertLessThan(Date().timeIntervalSince(killedAt), 0.5, "the end came later than 500 ms after the kill")
        XCTAssertEqual(music.interruptions("ended").first?["options"] as? [String], ["shouldResume"])
        XCTAssertTrue(waitUntil { probe.levels(over: 0.1)[0] > playing - 0.5 }, "music did not resume")

        let ducker = try player(server, "ducker", port: 2, ["--duck"])
        XCTAssertTrue(waitUntil { abs(probe.levels(over: 0.1)[0] - (playing - 20)) < 0.5 }, "not ducked")
        kill(ducker.process.processIdentifier, SIGKILL)
        XCTAssertTrue(waitUntil(timeout: 1.5) { abs(probe.levels(over: 0.1)[0] - playing) < 0.5 },
                      "a crashed ducker left the music ducked")
    }

    func testSimultaneousActivationsInTwoProcessesAlwaysLeaveOneWinner() throws {
        let server = try startServer(period: 256)
        let reader = try Client(name: "reader", serverName: server.name)
        defer { reader.close() }
        var gaps: [UInt64] = []
        var stuck: [String] = []
        defer {
            let sorted = gaps.sorted()
            print("activation order gaps between the two processes, µs: median \(sorted.isEmpty ? 0 : sorted[sorted.count / 2]), "
                  + "max \(sorted.last ?? 0); rounds run again because a player did not start: \(stuck.count)")
        }
        var round = 0
        while round < 50 {
            round += 1
            // Both processes activate at the same instant of the wall clock.
            let instant = String(Date().timeIntervalSince1970 + 0.3)
            let players = try ["left", "right"].map { side in
                try Player(jas: jas, server: server.name, name: "\(side)-\(round)", port: "loopback:playback_1",
                           arguments: ["--start-at", instant])
            }
            // A process that never got its session going (seen once in many
            // runs: it printed nothing at all) is no race: that round is run
            // again, at most three times in all, and reported.
            if !waitUntil(timeout: 10, { players.allSatisfy(\.started) }) {
                // Killed first: reading a running player's stderr blocks until it writes.
                for player in players {
                    kill(player.process.processIdentifier, SIGKILL)
                    player.process.waitUntilExit()
                }
                stuck.append(players.filter { !$0.started }.map { "\($0.name): \($0.diagnostics)" }.joined())
                XCTAssertLessThanOrEqual(stuck.count, 3, "players that did not start: \(stuck)")
                if stuck.count > 3 { break }
                round -= 1
                continue
            }
            XCTAssertTrue(waitUntil {
                let states = SessionDirectory.sessions(in: SessionRegistry(serverName: server.name), using: reader) ?? []
                return states.filter { $0.state.client.hasSuffix("-\(round)") }.count == 2
                    && states.filter(\.state.active).count == 1 && states.filter(\.state.interrupted).count == 1
            }, "round \(round): raw \(SessionRegistry(serverName: server.name).liveRecords().map { "\($0)" } ?? "unreadable") "
               + "\(SessionDirectory.sessions(in: SessionRegistry(serverName: server.name), using: reader) ?? []) "
               + players.map { "\($0.name): \($0.lines.objects) \($0.process.isRunning ? "" : $0.diagnostics)" }.joined())
            let states = SessionDirectory.sessions(in: SessionRegistry(serverName: server.name), using: reader) ?? []
            let winner = try XCTUnwrap(states.first(where: \.state.active), "round \(round)")
            let loser = try XCTUnwrap(states.first(where: \.state.interrupted), "round \(round)")
            XCTAssertTrue(Arbitration.precedes(loser, winner), "round \(round): the earlier activation won")
            XCTAssertEqual(loser.state.interruptedBy, winner.state.client)
            // The loser, and only the loser, was told.
            XCTAssertTrue(waitUntil { players.contains { !$0.interruptions("began").isEmpty } }, "round \(round)")
            let told = players.filter { !$0.interruptions("began").isEmpty }.map(\.name)
            XCTAssertEqual(told, [loser.state.client], "round \(round)")
            gaps.append(winner.state.order - loser.state.order)
            // Ended as a user would (Ctrl-C): a killed client leaks part of
            // jackd's metadata store (see ServerRegistry), and a hundred of
            // them wear it out.
            for player in players { player.process.interrupt() }
            for player in players { player.process.waitUntilExit() }
        }
    }

    func testSpokenAudioIsInterruptedByInterruptSpokenAudioOthersMix() throws {
        let server = try startServer(period: 256)
        let podcast = AudioSession(clientName: "podcast", serverName: server.name)
        let music = AudioSession(clientName: "music", serverName: server.name)
        let prompt = AudioSession(clientName: "prompt", serverName: server.name)
        defer { [podcast, music, prompt].forEach { $0.close() } }
        try podcast.setCategory(.playback, mode: .spokenAudio, options: .mixWithOthers)
        try music.setCategory(.playback)
        try prompt.setCategory(.playback, mode: .spokenAudio, options: .interruptSpokenAudioAndMixWithOthers)
        try podcast.setActive(true)
        try music.setActive(true)
        let podcastEvents = EventRecorder(podcast)
        try prompt.setActive(true)
        XCTAssertTrue(waitUntil { podcastEvents.interruptions.first?.type == .began })
        XCTAssertTrue(waitUntil { music.isOtherAudioPlaying })
        XCTAssertTrue(music.isActive, "a non-spoken session was interrupted")
        XCTAssertTrue(prompt.isActive)
        XCTAssertFalse(podcast.isActive)
        XCTAssertTrue(podcast.isInterrupted)
        XCTAssertFalse(music.isInterrupted)
    }

    func testHostileStatesAreIgnoredAndPlainClientsUntouched() throws {
        let server = try startServer(period: 256)
        let probe = try LevelProbe(serverName: server.name, listeningTo: ["loopback:capture_2"])
        // A plain JACK client (not a session) playing into loopback:playback_2.
        let plain = try Client(name: "plain", serverName: server.name)
        defer { plain.close() }
        let out = try plain.registerPort("out", flags: .output)
        try plain.setProcessor(RealtimeProcessor(client: plain, inputs: [], outputs: [out]) { cycle in
            cycle.outputs[0].update(repeating: 0.25, count: cycle.frameCount)
        })
        try plain.activate()
        try plain.connect("plain:out", to: "loopback:playback_2")
        let session = AudioSession(clientName: "victim", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback)
        session.setPreferredOutputPortNames(["loopback:playback_1"])
        try session.setActive(true)
        // Well-formed but for its duck level, and naming a client that is on the server.
        var valid = SessionState(server: server.name, client: "plain", pid: 1, category: .playback, mode: .default,
                                 options: [], active: true, priority: .ordinary, order: UInt64.max, interrupted: false,
                                 interruptedBy: nil, producingSound: true, ducking: true, ducked: false,
                                 duckLevelDB: -20, resumeOthers: false)
        valid.duckLevelDB = -1e308
        valid.clientUUID = plain.uuid
        let values = ["garbage", String(repeating: "{", count: 100_000), #"{"version":1,"active":"yes"}"#,
                      #"{"version":99}"#, valid.encoded().replacingOccurrences(of: "-1e+308", with: "-1e999"),
                      valid.encoded(), "\u{0}\u{1}\u{FFFF}", "[]", "null"]
        // Each planted as a live session's file would be (locked, so not
        // taken for a dead one), plus what is no session file at all.
        let registry = SessionRegistry(serverName: server.name)
        var planted: [Int32] = []
        defer { planted.forEach { close($0) } }
        for (index, value) in values.enumerated() {
            let path = registry.directory + "/hostile-\(index).json"
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            XCTAssertGreaterThanOrEqual(descriptor, 0, path)
            XCTAssertEqual(Array(value.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }, value.utf8.count)
            XCTAssertEqual(flock(descriptor, LOCK_EX), 0)
            planted.append(descriptor)
        }
        XCTAssertEqual(mkfifo(registry.directory + "/fifo.json", 0o600), 0)
        XCTAssertEqual(symlink("/dev/zero", registry.directory + "/link.json"), 0)
        XCTAssertEqual(mkdir(registry.directory + "/folder.json", 0o700), 0)
        // Two whole arbitrations after all of it was planted: the session has read every file.
        let seen = session.arbitrationsCompleted
        XCTAssertTrue(waitUntil(timeout: 10) { session.arbitrationsCompleted >= seen + 2 })
        XCTAssertTrue(session.isActive, "interrupted by one of the hostile values: \(values.map { $0.prefix(40) })")
        XCTAssertFalse(session.isDucked, "ducked by one of the hostile values: \(values.map { $0.prefix(40) })")
        XCTAssertTrue(session.publishedSessions().allSatisfy { $0.state.client == "victim" })
        XCTAssertEqual(session.publishedSessions().count, 1)
        XCTAssertEqual(probe.levels()[0], 20 * log10(0.25), accuracy: 0.1, "the plain client's audio changed")
        assertEventuallyEqual(out.connections, ["loopback:playback_2"])
    }

    func testStateIsPublishedAgainAfterAMediaServicesReset() throws {
        let name = LoopbackServer.uniqueName()
        let first = try startServer(name: name, period: 256)
        let session = AudioSession(clientName: "survivor", serverName: name)
        defer { session.close() }
        try session.setCategory(.playback)
        try session.setActive(true)
        XCTAssertEqual(session.publishedSessions().map(\.state.client), ["survivor"])
        first.stop()
        let second = try startServer(name: name, period: 256)
        XCTAssertTrue(waitUntil(timeout: 10) { session.isActive })
        let reader = try Client(name: "reader", serverName: second.name)
        defer { reader.close() }
        XCTAssertTrue(waitUntil {
            SessionDirectory.sessions(in: SessionRegistry(serverName: name), using: reader)?.map(\.state.client) == ["survivor"]
        })
    }
}

/// A render block that plays a −20 dBFS-peak 750 Hz sine while `on` is set.
final class SoundSwitch: @unchecked Sendable {
    let on = Atomic<Bool>(true)
    var phase = 0

    var renderBlock: RenderBlock {
        { cycle in
            let sounding = self.on.load(ordering: .relaxed)
            for frame in 0..<cycle.frameCount {
                let value = sounding ? Float(0.1 * sin(2 * Double.pi * Double(self.phase) / 64)) : 0
                self.phase = (self.phase + 1) % 64
                for buffer in cycle.outputs { buffer[frame] = value }
            }
        }
    }
}
