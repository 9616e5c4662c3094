import Foundation
import JackTestSupport
import LoopbackHarness
import XCTest

/// The session and jas on PipeWire's JACK: a private headless PipeWire
/// daemon (null sinks, no hardware), every client a `pw-jack jas` process
/// (this test process runs on jack2's libjack).
final class PipeWireTests: JackTestCase {
    private var daemons: [PipeWireServer] = []

    /// `pw-jack jas` processes started in the background, killed by PID at the end.
    private var clients: [Process] = []

    override func tearDown() {
        for client in clients where client.isRunning {
            kill(client.processIdentifier, SIGKILL)
            client.waitUntilExit()
        }
        clients.removeAll()
        let failed = (testRun?.totalFailureCount ?? 0) > 0
        for daemon in daemons {
            if failed { print("---- PipeWire '\(daemon.name)' log ----\n\(daemon.log)\n---- end of log ----") }
            daemon.stop()
        }
        daemons.removeAll()
        super.tearDown()
    }

    private func startDaemon(name: String = LoopbackServer.uniqueName(prefix: "jas-pw"), defaultMetadata: Bool = true)
        throws -> PipeWireServer {
        do {
            let daemon = try PipeWireServer(name: name, defaultMetadata: defaultMetadata)
            daemons.append(daemon)
            return daemon
        } catch {
            XCTFail("could not start PipeWire: \(error)")
            throw error
        }
    }

    private func pwJas(_ daemon: PipeWireServer, _ arguments: [String], environment: [String: String] = [:]) throws
        -> (status: Int32, output: String) {
        try run(daemon.command([jas] + arguments), environment: daemon.environment.merging(environment) { $1 })
    }

    /// Starts `pw-jack jas ARGUMENTS` in the background; its JSON lines are collected.
    private func startJas(_ daemon: PipeWireServer, _ arguments: [String]) throws -> (Process, LineCollector) {
        let command = daemon.command([jas] + arguments)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(daemon.environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let lines = LineCollector(output)
        try process.run()
        clients.append(process)
        return (process, lines)
    }

    /// `jas play` of a 750 Hz sine at -20 dBFS peak, started and routed.
    private func startPlayer(_ daemon: PipeWireServer, _ arguments: [String]) throws -> LineCollector {
        let (_, lines) = try startJas(daemon, ["play", "--server", daemon.name, "--frequency", "750", "--json"] + arguments)
        XCTAssertTrue(waitUntil { lines.objects.contains { $0["event"] as? String == "routeChange" } }, "\(lines.objects)")
        return lines
    }

    /// Each port's sample peak over one second (nil: digital silence):
    /// `jack_rec`, a plain JACK client that no session arbitration reaches,
    /// records the ports, and `jas meter --file` reads the take.
    private func peaks(_ daemon: PipeWireServer, _ ports: [String]) throws -> [Double?] {
        let take = NSTemporaryDirectory() + "jas-pw-probe-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: take) }
        let record = try run(daemon.command(["jack_rec", "-f", take, "-d", "1", "-b", "32"] + ports),
                             environment: daemon.environment.merging(["PIPEWIRE_REMOTE": daemon.name]) { $1 })
        XCTAssertEqual(record.status, 0, record.output)
        let meter = try pwJas(daemon, ["meter", "--file", take, "--json"])
        let summary = try XCTUnwrap(jsonLines(meter.output).last { $0["event"] as? String == "summary" }, meter.output)
        let channels = try XCTUnwrap(summary["channels"] as? [[String: Any]], meter.output)
        XCTAssertEqual(channels.count, ports.count, meter.output)
        return channels.map { $0["sample_peak_dbfs"] as? Double }
    }

    private func isSilent(_ peak: Double?) -> Bool { peak.map { $0 < -100 } ?? true }

    /// The streams `jas status --json` lists, by name.
    private func streams(_ daemon: PipeWireServer) throws -> [String: [String: Any]] {
        let status = try pwJas(daemon, ["status", "--server", daemon.name, "--json"])
        let list = jsonLines(status.output).first?["streams"] as? [[String: Any]] ?? []
        return Dictionary(list.map { ($0["name"] as? String ?? "?", $0) }, uniquingKeysWith: { first, _ in first })
    }

    private func ports(_ daemon: PipeWireServer) throws -> [String] {
        let status = try pwJas(daemon, ["status", "--server", daemon.name, "--json"])
        return (jsonLines(status.output).first?["ports"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    func testStatusSaysItIsPipeWireWithItsVersion() throws {
        let daemon = try startDaemon()
        let status = try pwJas(daemon, ["status", "--server", daemon.name, "--json"])
        XCTAssertEqual(status.status, 0, status.output)
        let object = try XCTUnwrap(jsonLines(status.output).first, status.output)
        let implementation = try XCTUnwrap(object["implementation"] as? [String: Any], status.output)
        XCTAssertEqual(implementation["implementation"] as? String, "PipeWire")
        let version = try XCTUnwrap(implementation["server_version"] as? String, status.output)
        XCTAssertEqual(version, daemon.version, "the version of the PipeWire that runs (\(daemon.installation))")
        XCTAssertNil(implementation["netjack"])
        XCTAssertEqual((implementation["limitations"] as? [Any])?.count, 0, "the daemon has its metadata: \(status.output)")
        let ports = (object["ports"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        XCTAssertTrue(ports.contains("Null Sink:playback_FL") && ports.contains("Null Sink:monitor_FL"), "\(ports)")
        XCTAssertEqual(object["period_frames"] as? Int, daemon.quantum)
        let text = try pwJas(daemon, ["status", "--server", daemon.name])
        XCTAssertTrue(text.output.contains("PipeWire \(version) (libjack "), text.output)
        // And jackd2 says it is jackd2.
        let server = try startServer(period: 256)
        let jackd = try run([jas, "status", "--server", server.name, "--json"])
        let jackdImplementation = try XCTUnwrap(jsonLines(jackd.output).first?["implementation"] as? [String: Any])
        XCTAssertEqual(jackdImplementation["implementation"] as? String, "jackd2", jackd.output)
        XCTAssertEqual(jackdImplementation["pid"] as? Int, Int(server.pid), jackd.output)
    }

    func testSelftestThroughANullSinkIsBitExactAndExpectsNoDelayUntilOneIsCalibrated() throws {
        let daemon = try startDaemon()
        let config = NSTemporaryDirectory() + "jas-pw-config-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: config) }
        let environment = ["XDG_CONFIG_HOME": config]
        let path = ["--server", daemon.name, "--out", "Null Sink:playback_FL", "--in", "Null Sink:monitor_FL"]
        // PipeWire reports 0 latency for a null sink while the audio returns a
        // quantum later. Its loop through the monitor drops a period now and
        // then without an xrun (a C client sees it too): such a run is retried.
        let attempts = ["--attempts", "10"]
        let first = try pwJas(daemon, ["selftest"] + path + attempts + ["--duration", "1", "--json"], environment: environment)
        let verdict = try XCTUnwrap(jsonLines(first.output).first, first.output)
        XCTAssertEqual(verdict["bit_exact"] as? Bool, true, first.output)
        XCTAssertEqual(verdict["dropouts"] as? Int, 0, first.output)
        XCTAssertEqual(verdict["mismatches"] as? Int, 0, first.output)
        XCTAssertEqual(verdict["measured_roundtrip_frames"] as? Int, daemon.quantum, first.output)
        XCTAssertEqual(verdict["input_latency_frames"] as? Int, 0, first.output)
        XCTAssertEqual(verdict["output_latency_frames"] as? Int, 0, first.output)
        XCTAssertNil(verdict["expected_roundtrip_frames"], "0 is no delay to expect: \(first.output)")
        XCTAssertEqual(verdict["passed"] as? Bool, true, first.output)
        XCTAssertEqual(first.status, 0, first.output)
        let text = try pwJas(daemon, ["selftest"] + path + attempts + ["--duration", "1"], environment: environment)
        XCTAssertTrue(text.output.contains("none expected: the server reports 0 latency for this path"), text.output)

        // jas latency reads the quantum against 0 reported; a period the loop
        // lost as silence spoils a reading (a dropout), never moves it.
        let latency = try pwJas(daemon, ["latency"] + path + ["--count", "3", "--json"], environment: environment)
        XCTAssertEqual(latency.status, 0, latency.output)
        let readings = jsonLines(latency.output).filter { $0["valid"] as? Bool == true }
        XCTAssertEqual(readings.count, 3, latency.output)
        for reading in readings {
            XCTAssertEqual(reading["reported_frames"] as? Int, 0, latency.output)
            XCTAssertEqual(reading["measured_frames"] as? Double ?? -1, Double(daemon.quantum), accuracy: 0.01, latency.output)
        }
        XCTAssertTrue(jsonLines(latency.output).allSatisfy {
            $0["valid"] as? Bool == true || ["dropout", "xrun"].contains($0["problem"] as? String ?? "")
        }, latency.output)

        // Measured and stored, the delay is what the session reports and selftest then expects.
        let calibration = try pwJas(daemon, ["latency"] + path + ["--count", "3", "--calibrate"], environment: environment)
        XCTAssertEqual(calibration.status, 0, calibration.output)
        let again = try pwJas(daemon, ["selftest"] + path + attempts + ["--duration", "1", "--json"], environment: environment)
        let calibrated = try XCTUnwrap(jsonLines(again.output).first, again.output)
        XCTAssertEqual(calibrated["expected_roundtrip_frames"] as? Int, daemon.quantum, again.output)
        XCTAssertEqual(calibrated["measured_roundtrip_frames"] as? Int, daemon.quantum, again.output)
        XCTAssertEqual(again.status, 0, again.output)
    }

    /// The analyzer through a null sink and its monitor (bit-exact, a
    /// quantum's delay): a flat response, the float path's THD+N floor, and
    /// digital silence when idle; a period the loop loses as silence is a
    /// spoilt run, measured again, never a figure.
    func testTheAnalyzerThroughANullSinkMeasuresAFlatBitExactPath() throws {
        let daemon = try startDaemon()
        let path = ["--server", daemon.name, "--out", "Null Sink:playback_FL", "--in", "Null Sink:monitor_FL", "--json"]
        let response = try pwJas(daemon, ["analyze", "response", "--length", "2s"] + path)
        XCTAssertEqual(response.status, 0, response.output)
        let channel = try XCTUnwrap((jsonLines(response.output).first { $0["event"] as? String == "response" }?["channels"]
                                     as? [[String: Any]])?.first, response.output)
        XCTAssertEqual(channel["delay_frames"] as? Int, daemon.quantum, "a quantum through the monitor")
        for point in try XCTUnwrap(channel["response"] as? [[String: Double]]) {
            XCTAssertEqual(try XCTUnwrap(point["magnitude_db"]), 0, accuracy: 0.001, "\(point)")
            XCTAssertEqual(try XCTUnwrap(point["phase_deg"]), 0, accuracy: 0.01, "\(point)")
        }
        let thd = try pwJas(daemon, ["analyze", "thd"] + path)
        XCTAssertEqual(thd.status, 0, thd.output)
        let stepped = try XCTUnwrap((jsonLines(thd.output).first { $0["event"] as? String == "thd" }?["channels"]
                                     as? [[String: Any]])?.first, thd.output)
        XCTAssertEqual(try XCTUnwrap(stepped["gain_db"] as? Double), 0, accuracy: 0.001)
        XCTAssertLessThan(try XCTUnwrap(stepped["thd_n_db"] as? Double), -120, thd.output)
        print("PipeWireTests: the analyzer through a null sink: THD+N \(stepped["thd_n_db"] ?? "?") dB, "
              + "\(response.output.components(separatedBy: "spoilt").count - 1 + thd.output.components(separatedBy: "spoilt").count - 1) spoilt runs")
    }

    func testADaemonWithoutTheDefaultMetadataObjectIsSaidOnceAndSessionsStillArbitrate() throws {
        let daemon = try startDaemon(defaultMetadata: false)
        let status = try pwJas(daemon, ["status", "--server", daemon.name, "--json"])
        XCTAssertEqual(status.status, 0, status.output)
        let implementation = try XCTUnwrap(jsonLines(status.output).first?["implementation"] as? [String: Any], status.output)
        let limitations = try XCTUnwrap(implementation["limitations"] as? [[String: Any]], status.output)
        XCTAssertEqual(limitations.count, 1, status.output)
        XCTAssertEqual(limitations.first?["missing"] as? String, "PipeWire's 'default' metadata object")
        XCTAssertTrue((limitations.first?["remedy"] as? String ?? "").contains("{ factory = metadata args = { metadata.name = default } }"),
                      status.output)
        let text = try pwJas(daemon, ["status", "--server", daemon.name])
        XCTAssertTrue(text.output.contains("limitation: PipeWire's 'default' metadata object is missing: JACK metadata cannot"),
                      text.output)

        // A simulated device is its port-type metadata: it cannot be plugged, and says why.
        let plug = try run(["/usr/bin/timeout", "10"] + daemon.command([jas, "device", "plug", "cans", "--server", daemon.name]),
                           environment: daemon.environment)
        XCTAssertEqual(plug.status, 2, plug.output)
        XCTAssertTrue(plug.output.contains("jas device plug: PipeWire's 'default' metadata object is missing"), plug.output)

        // A session says it once, as an event, and goes on: it plays, and a
        // call in another process still interrupts it.
        let player = try startPlayer(daemon, ["--name", "A", "--port", "Null Sink:playback_FL"])
        let said = player.objects.filter { $0["event"] as? String == "serverLimitation" }
        XCTAssertEqual(said.count, 1, "\(player.objects)")
        XCTAssertEqual(said.first?["missing"] as? String, "PipeWire's 'default' metadata object")
        XCTAssertEqual(try XCTUnwrap(peaks(daemon, ["Null Sink:monitor_FL"]).first ?? nil), -20, accuracy: 0.1)
        let (call, _) = try startJas(daemon, ["interrupt", "--server", daemon.name, "--as", "call", "--for", "1", "--json"])
        XCTAssertTrue(waitUntil { player.objects.contains { $0["event"] as? String == "interruption" } }, "\(player.objects)")
        XCTAssertTrue(waitUntil(timeout: 5) { !call.isRunning })
        XCTAssertTrue(waitUntil(timeout: 5) {
            player.objects.contains { $0["event"] as? String == "interruption" && $0["type"] as? String == "ended" }
        }, "\(player.objects)")
        XCTAssertEqual(player.objects.filter { $0["event"] as? String == "serverLimitation" }.count, 1, "said once only")
    }

    func testADaemonRestartIsAMediaServicesReset() throws {
        let daemon = try startDaemon()
        let (monitor, lines) = try startJas(daemon, ["monitor", "--server", daemon.name, "--json"])
        func events(_ name: String) -> [[String: Any]] { lines.objects.filter { $0["event"] as? String == name } }
        XCTAssertTrue(waitUntil(timeout: 10) { !events("routeChange").isEmpty }, "\(lines.objects)")
        kill(daemon.pid, SIGKILL)
        daemon.stop()
        XCTAssertTrue(waitUntil(timeout: 10) { !events("mediaServicesWereLost").isEmpty }, "\(lines.objects)")
        usleep(500_000)   // away a moment, as a supervised daemon is before it is started again
        _ = try startDaemon(name: daemon.name)
        XCTAssertTrue(waitUntil(timeout: 20) { !events("mediaServicesWereReset").isEmpty }, "\(lines.objects)")
        XCTAssertEqual(events("mediaServicesWereReset").first?["reactivated"] as? Bool, true)
        kill(monitor.processIdentifier, SIGINT)
        XCTAssertTrue(waitUntil(timeout: 10) { !monitor.isRunning })
    }

    func testAPeriodRequestIsGrantedWhileTheClientLivesAndReportedAsGranted() throws {
        let daemon = try startDaemon()
        let run = try pwJas(daemon, ["selftest", "--server", daemon.name, "--out", "Null Sink:playback_FL",
                                     "--in", "Null Sink:monitor_FL", "--period", "128", "--attempts", "10",
                                     "--duration", "1", "--json"])
        let verdict = try XCTUnwrap(jsonLines(run.output).first, run.output)
        XCTAssertEqual(verdict["period_requested"] as? Int, 128, run.output)
        XCTAssertEqual(verdict["period_frames"] as? Int, 128, run.output)
        XCTAssertEqual(verdict["measured_roundtrip_frames"] as? Int, 128, run.output)
        // Bit-exact, unless dropouts spoilt every attempt (beside a busy core, quantum 128 dropped out in
        // all ten 1 s attempts): never with a sample that differs.
        let spoilt = verdict["mismatches"] as? Int == 0 && (verdict["dropouts"] as? Int ?? 0) + (verdict["xruns"] as? Int ?? 0) > 0
        XCTAssertTrue(verdict["passed"] as? Bool == true || spoilt, run.output)
        // PipeWire forces a client's quantum only while the client lives.
        let status = try pwJas(daemon, ["status", "--server", daemon.name, "--json"])
        XCTAssertEqual(jsonLines(status.output).first?["period_frames"] as? Int, daemon.quantum, status.output)
    }

    func testACallSilencesAPlayerInAnotherProcessAndItsEndLetsItResume() throws {
        let daemon = try startDaemon()
        let player = try startPlayer(daemon, ["--name", "A", "--port", "Null Sink:playback_FL"])
        func interruptions(_ type: String) -> [[String: Any]] {
            player.objects.filter { $0["event"] as? String == "interruption" && $0["type"] as? String == type }
        }
        XCTAssertEqual(try XCTUnwrap(peaks(daemon, ["Null Sink:monitor_FL"]).first ?? nil), -20, accuracy: 0.1)
        // The call is its own process; sessions find each other in the session registry (/dev/shm).
        let (call, callLines) = try startJas(daemon, ["interrupt", "--server", daemon.name, "--as", "call",
                                                      "--for", "4", "--json"])
        XCTAssertTrue(waitUntil { interruptions("began").count == 1 }, "\(player.objects)")
        XCTAssertEqual(interruptions("began").first?["reason"] as? String, "callStarted")
        XCTAssertTrue(isSilent(try peaks(daemon, ["Null Sink:monitor_FL"])[0]), "the interrupted player is still heard")
        XCTAssertTrue(waitUntil(timeout: 8) { interruptions("ended").count == 1 }, "\(player.objects)")
        XCTAssertEqual(interruptions("ended").first?["options"] as? [String], ["shouldResume"])
        XCTAssertTrue(waitUntil(timeout: 5) { !call.isRunning })
        XCTAssertEqual(callLines.objects.first { $0["event"] as? String == "began" }?["interrupted"] as? [String], ["A"],
                       "\(callLines.objects)")
        XCTAssertTrue(waitUntil(timeout: 5) { ((try? self.peaks(daemon, ["Null Sink:monitor_FL"]))?[0] ?? nil) ?? -200 > -20.1 },
                      "the player did not resume")
    }

    func testADuckingPromptInAnotherProcessLowersAPlayerByItsLevelAndRestoresIt() throws {
        let daemon = try startDaemon()
        let music = try startPlayer(daemon, ["--name", "music", "--port", "Null Sink:playback_FL"])
        XCTAssertEqual(try XCTUnwrap(peaks(daemon, ["Null Sink:monitor_FL"]).first ?? nil), -20, accuracy: 0.1)
        let (prompt, _) = try startJas(daemon, ["play", "--server", daemon.name, "--name", "prompt", "--port",
                                                "Null Sink:playback_FR", "--duck", "--duck-level=-12", "--for", "4", "--json"])
        // The player learns of the ducker by polling (100–500 ms): wait for the level, not a fixed time.
        func peak() -> Double { ((try? peaks(daemon, ["Null Sink:monitor_FL"]))?.first ?? nil) ?? -200 }
        XCTAssertTrue(waitUntil(timeout: 3) { abs(peak() - -32) < 0.2 }, "not ducked by 12 dB: \(peak())")
        XCTAssertFalse(music.objects.contains { $0["event"] as? String == "interruption" }, "ducking must not interrupt")
        XCTAssertTrue(waitUntil(timeout: 6) { !prompt.isRunning })
        XCTAssertTrue(waitUntil(timeout: 3) { abs(peak() - -20) < 0.1 }, "not restored: \(peak())")
    }

    /// An output device named `name` that plays back what it gets on `returns`
    /// (ports as `jack_rec` names them), plugged until `unplug` runs. A null
    /// sink where the daemon marks its ports physical (0.3.65 marks every
    /// sink's); PipeWire 1.4 marks only hardware nodes' ports physical, so
    /// there it is a `jas device plug` client, whose physical ports 1.4's
    /// libjack passes on (`port.physical`) and whose capture returns its playback.
    private struct Destination {
        let returns: [String]
        let unplug: () throws -> Void
    }

    private func plugDestination(_ daemon: PipeWireServer, _ name: String) throws -> Destination {
        if try nullSinksArePhysical(daemon) {
            let node = name == "Null Sink" ? nil : try daemon.addSink(name)
            XCTAssertTrue(waitUntil { (try? self.ports(daemon).contains("\(name):playback_FR")) == true })
            return Destination(returns: ["\(name):monitor_FL", "\(name):monitor_FR"],
                               unplug: { if let node { try daemon.removeSink(node: node) } })
        }
        let (device, _) = try startJas(daemon, ["device", "plug", name, "--server", daemon.name, "--type", "lineOut"])
        XCTAssertTrue(waitUntil { (try? self.ports(daemon).contains("\(name):playback_2")) == true }, "\(name) was not plugged")
        return Destination(returns: ["\(name):capture_1", "\(name):capture_2"], unplug: {
            device.interrupt()
            device.waitUntilExit()
        })
    }

    /// Whether the daemon's null sinks count as devices (physical ports).
    private func nullSinksArePhysical(_ daemon: PipeWireServer) throws -> Bool {
        let status = try pwJas(daemon, ["status", "--server", daemon.name, "--json"])
        let ports = jsonLines(status.output).first?["ports"] as? [[String: Any]] ?? []
        return ports.first { $0["name"] as? String == "Null Sink:playback_FL" }?["physical"] as? Bool == true
    }

    func testMultirouteStreamsReachDistinctSinksAndFollowOneThatGoesAndComesBack() throws {
        let daemon = try startDaemon()
        let physical = try nullSinksArePhysical(daemon)
        let mainName = physical ? "Null Sink" : "Main Out"
        let main = try plugDestination(daemon, mainName)
        defer { try? main.unplug() }
        var cue = try plugDestination(daemon, "Sink B")
        let player = try startPlayer(daemon, ["--name", "dj", "--route", "cue=Sink B", "--route", "main=\(mainName):1"])
        XCTAssertTrue(waitUntil { (try? self.streams(daemon).values.allSatisfy { $0["connected"] as? Bool == true }) == true
                                  && (try? self.streams(daemon).count) == 2 }, "\(player.objects)")
        XCTAssertEqual(try streams(daemon)["cue"]?["destination"] as? String, "Sink B")
        XCTAssertEqual(try streams(daemon)["main"]?["channels"] as? [Int], [1])
        let returns = cue.returns + main.returns
        let levels = try peaks(daemon, returns)
        for index in 0..<3 { XCTAssertEqual(levels[index] ?? -200, -20, accuracy: 0.1, "\(returns[index]): \(levels)") }
        XCTAssertTrue(isSilent(levels[3]), "the main stream is one channel: \(levels)")

        // The cue's device goes: the route change names the stream, the main stream plays on.
        try cue.unplug()
        func changes(_ reason: String) -> [[String: Any]] { player.objects.filter { $0["reason"] as? String == reason } }
        XCTAssertTrue(waitUntil { !changes("oldDeviceUnavailable").isEmpty }, "\(player.objects)")
        XCTAssertEqual(changes("oldDeviceUnavailable").first?["streams"] as? [String], ["cue"])
        XCTAssertTrue(waitUntil { (try? self.streams(daemon)["cue"]?["connected"] as? Bool) == false })
        XCTAssertEqual(try streams(daemon)["main"]?["connected"] as? Bool, true)
        XCTAssertEqual(try XCTUnwrap(peaks(daemon, [main.returns[0]]).first ?? nil), -20, accuracy: 0.1)

        // It comes back: the stream follows it.
        cue = try plugDestination(daemon, "Sink B")
        XCTAssertTrue(waitUntil { (try? self.streams(daemon)["cue"]?["connected"] as? Bool) == true },
                      "\(player.objects) with ports \((try? ports(daemon)) ?? [])")
        XCTAssertEqual(changes("newDeviceAvailable").last?["streams"] as? [String], ["cue"], "\(player.objects)")
        XCTAssertEqual(try XCTUnwrap(peaks(daemon, [cue.returns[0]]).first ?? nil), -20, accuracy: 0.1)
        try cue.unplug()
    }

    func testRecordTakesWhatASinkPlaysLoggingEveryGapAndMeterReadsTheTake() throws {
        let daemon = try startDaemon()
        _ = try startPlayer(daemon, ["--name", "A", "--port", "Null Sink:playback_FL"])
        let take = NSTemporaryDirectory() + "jas-pw-take-\(UUID().uuidString).wav"
        defer {
            try? FileManager.default.removeItem(atPath: take)
            try? FileManager.default.removeItem(atPath: take + ".log")
        }
        let record = try pwJas(daemon, ["record", "--server", daemon.name, "--ports", "Null Sink:monitor_FL",
                                        "--output", take, "--for", "1"])
        XCTAssertEqual(record.status, 0, record.output)
        XCTAssertTrue(record.output.contains("wrote 48000 frames"), record.output)
        // The disk thread never fell behind. Xruns are the machine's: beside a
        // busy core, PipeWire 1.4 reported 7 in this 1 s take without losing a
        // frame. A loaded machine also makes PipeWire's timer skip a cycle now
        // and then without an xrun (rehearsal 40: twice in a take). Whatever
        // was lost, the take must log each loss as a discontinuity gap written
        // as silence, and nothing else; and what it wrote is what was played (the peak).
        XCTAssertTrue(record.output.contains("overruns 0, xruns "), record.output)
        let missing = record.output.split(separator: "\n").filter { $0.contains("frames missing") }
        XCTAssertTrue(missing.allSatisfy { $0.contains("frames missing (discontinuity)") }, record.output)
        XCTAssertTrue(record.output.contains("gaps \(missing.count)"), record.output)
        let meter = try pwJas(daemon, ["meter", "--file", take, "--json"])
        let summary = try XCTUnwrap(jsonLines(meter.output).last { $0["event"] as? String == "summary" }, meter.output)
        XCTAssertEqual(summary["sample_peak_dbfs"] as? Double ?? -200, -20, accuracy: 0.01, meter.output)
    }
}
