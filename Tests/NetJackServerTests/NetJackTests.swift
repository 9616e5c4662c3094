import Foundation
import JackKit
import JackTestSupport
import LoopbackHarness
import Recording
import SoundFile
import XCTest

/// Sessions and tools on a netjack2 slave: a master jackd here (netmanager,
/// loopback ports), a slave jackd on a `SeparateMachine`, everything on the
/// slave run as processes in that machine (jack2's libjack talks to one
/// server per process, and the slave's /dev/shm is its own).
final class NetJackTests: JackTestCase {
    private var rigs: [NetJackRig] = []

    override func tearDown() {
        let failed = (testRun?.totalFailureCount ?? 0) > 0
        for rig in rigs {
            rig.stop()
            if failed {
                print("---- netjack2 master '\(rig.master.name)' log ----\n\(rig.master.log)\n"
                      + "---- slave '\(rig.slaveName)' log ----\n\(rig.slaveLog)\n---- end of logs ----")
            }
        }
        rigs.removeAll()
        super.tearDown()
    }

    private func startRig(networkLatency: Int = 2) throws -> NetJackRig {
        do {
            let rig = try NetJackRig(period: 256, networkLatency: networkLatency)
            rigs.append(rig)
            return rig
        } catch {
            XCTFail("could not start netjack2: \(error)")
            throw error
        }
    }

    /// `jas ARGUMENTS` on the slave's machine, to its end.
    private func jasOnSlave(_ rig: NetJackRig, _ arguments: [String], environment: [String: String] = [:]) throws
        -> (status: Int32, output: String) {
        try run(rig.slaveCommand([jas] + arguments), environment: environment)
    }

    /// `jas ARGUMENTS` on the slave, run again (up to `attempts` times) while
    /// `acceptable` refuses its output and the master reported an xrun during
    /// the run: a master cycle that ran late leaves old or no samples in its
    /// loopback, and nothing tells the slave (its driver is the network, on
    /// time). Without a master xrun the first refusal is the answer.
    private func jasOnSlave(_ rig: NetJackRig, _ arguments: [String], environment: [String: String] = [:],
                            attempts: Int, until acceptable: (Int32, String) -> Bool) throws
        -> (status: Int32, output: String) {
        let watch = try LevelProbe(name: "xrun-watch", serverName: rig.master.name, listeningTo: [])
        var result = (status: Int32(-1), output: "")
        for attempt in 1...attempts {
            let xrunsBefore = watch.xruns
            result = try jasOnSlave(rig, arguments, environment: environment)
            if acceptable(result.status, result.output) { break }
            let masterXruns = watch.xruns - xrunsBefore
            guard masterXruns > 0 else { break }
            print("netjack2: `jas \(arguments.first ?? "")` attempt \(attempt) disturbed by \(masterXruns) master xrun(s)")
        }
        return result
    }

    /// A long-running `jas` on the slave's machine, its JSON Lines collected.
    private final class SlaveJas {
        let process = Process()
        let lines: LineCollector
        let errors = LineCollector.Text()

        init(_ command: [String]) throws {
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            let output = Pipe(), errorPipe = Pipe()
            process.standardOutput = output
            process.standardError = errorPipe
            lines = LineCollector(output)
            errors.read(errorPipe)
            try process.run()
        }

        deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        func events(_ name: String) -> [[String: Any]] { lines.objects.filter { $0["event"] as? String == name } }

        /// SIGINT, then its end (SIGKILL after `timeout`); whether it ended by itself.
        @discardableResult
        func interrupt(timeout: Double = 15) -> Bool {
            kill(process.processIdentifier, SIGINT)
            return finish(timeout: timeout)
        }

        func finish(timeout: Double = 15) -> Bool {
            let deadline = ContinuousClock.now + .seconds(timeout)
            while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
            let ended = !process.isRunning
            if !ended { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            lines.waitForEnd()
            return ended
        }
    }

    private func slaveJas(_ rig: NetJackRig, _ arguments: [String]) throws -> SlaveJas {
        try SlaveJas(rig.slaveCommand([jas] + arguments))
    }

    /// The slave's ports and their connections, as `jas status --json` on the slave reads them.
    private func slaveConnections(_ rig: NetJackRig) throws -> [String: [String]] {
        let status = try jasOnSlave(rig, ["status", "--server", rig.slaveName, "--json"])
        guard status.status == 0, let object = jsonLines(status.output).first,
              let ports = object["ports"] as? [[String: Any]] else { return [:] }
        return Dictionary(ports.compactMap { port in
            (port["name"] as? String).map { ($0, port["connections"] as? [String] ?? []) }
        }, uniquingKeysWith: { first, _ in first })
    }

    func testStatusSaysTheServerIsANetjackSlaveAndWhatItsLinkIs() throws {
        let rig = try startRig()
        let status = try jasOnSlave(rig, ["status", "--server", rig.slaveName, "--json"])
        XCTAssertEqual(status.status, 0, status.output)
        let object = try XCTUnwrap(jsonLines(status.output).first, status.output)
        let implementation = try XCTUnwrap(object["implementation"] as? [String: Any], status.output)
        XCTAssertEqual(implementation["implementation"] as? String, "jackd2")
        XCTAssertEqual(implementation["driver"] as? String, "net")
        XCTAssertEqual(implementation["pid"] as? Int, Int(rig.slavePID), "the slave's jackd, found on its machine")
        let netjack = try XCTUnwrap(implementation["netjack"] as? [String: Any], status.output)
        XCTAssertEqual(netjack["master"] as? String, "127.0.0.1")
        XCTAssertEqual(netjack["name"] as? String, rig.netName)
        XCTAssertEqual(netjack["network_latency_periods"] as? Int, 2)
        XCTAssertEqual(netjack["mode"] as? String, "async")
        XCTAssertEqual(netjack["round_trip_frames"] as? Int, 3 * 256)
        let text = try jasOnSlave(rig, ["status", "--server", rig.slaveName])
        XCTAssertTrue(text.output.contains("netjack2 slave '\(rig.netName)' of 127.0.0.1, network latency 2 periods (async)"),
                      text.output)

        // The master, seen from here, is a local server: no netjack link.
        let master = try run([jas, "status", "--server", rig.master.name, "--json"])
        let masterObject = try XCTUnwrap(jsonLines(master.output).first, master.output)
        let masterImplementation = try XCTUnwrap(masterObject["implementation"] as? [String: Any])
        XCTAssertEqual(masterImplementation["pid"] as? Int, Int(rig.master.pid))
        XCTAssertNil(masterImplementation["netjack"], master.output)
        // A slave's name is another machine's here: the master's status does not find a process for it.
        let plain = try startServer(period: 256)
        let local = try run([jas, "status", "--server", plain.name, "--json"])
        let localImplementation = try XCTUnwrap(jsonLines(local.output).first?["implementation"] as? [String: Any])
        XCTAssertEqual(localImplementation["driver"] as? String, "dummy", local.output)
        XCTAssertNil(localImplementation["netjack"], local.output)
    }

    func testMeasurementThroughTheNetworkIsBitExactAndItsDelayIsTheReportedOnePlusTheMastersLoop() throws {
        for networkLatency in [2, 5] {
            let rig = try startRig(networkLatency: networkLatency)
            let config = NSTemporaryDirectory() + "jas-netjack-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: config) }
            let environment = ["XDG_CONFIG_HOME": config]
            let path = ["--server", rig.slaveName, "--out", "system:playback_1", "--in", "system:capture_1"]
            // What the slave reports: -l/2 periods each way, plus one period of async playback.
            let reported = (networkLatency + 1) * 256
            let expected = Double(reported + rig.masterLoopFrames)
            let latency = try jasOnSlave(rig, ["latency"] + path + ["--count", "3", "--json"], environment: environment,
                                         attempts: 3) { status, output in
                let readings = jsonLines(output).filter { $0["valid"] as? Bool == true }
                return status == 0 && readings.count == 3
                    && readings.allSatisfy { abs(($0["measured_frames"] as? Double ?? -1) - expected) <= 0.01 }
            }
            XCTAssertEqual(latency.status, 0, latency.output)
            let readings = jsonLines(latency.output).filter { $0["valid"] as? Bool == true }
            XCTAssertEqual(readings.count, 3, latency.output)
            for reading in readings {
                XCTAssertEqual(reading["reported_frames"] as? Int, reported, "-l \(networkLatency)")
                XCTAssertEqual(reading["measured_frames"] as? Double ?? -1, expected, accuracy: 0.01,
                               "-l \(networkLatency): the network path plus the master's own loop; \(latency.output)")
            }
            // Measurement mode through the whole path: bit-exact; the delay is
            // what the session expects once the master's loop is calibrated in.
            let calibration = try jasOnSlave(rig, ["latency"] + path + ["--count", "3", "--calibrate"], environment: environment)
            XCTAssertEqual(calibration.status, 0, calibration.output)
            let selftest = try jasOnSlave(rig, ["selftest"] + path + ["--duration", "2", "--json"], environment: environment,
                                          attempts: 3) { status, _ in status == 0 }
            let verdict = try XCTUnwrap(jsonLines(selftest.output).first, selftest.output)
            XCTAssertEqual(verdict["bit_exact"] as? Bool, true, selftest.output)
            XCTAssertEqual(verdict["measured_roundtrip_frames"] as? Int, reported + rig.masterLoopFrames, selftest.output)
            XCTAssertEqual(verdict["expected_roundtrip_frames"] as? Int, reported + rig.masterLoopFrames, selftest.output)
            XCTAssertEqual(selftest.status, 0, selftest.output)
            rig.stop()
        }
    }

    /// The analyzer on a netjack2 slave, through the master's loopback:
    /// a flat response whose delay is the network's plus the master's loop,
    /// and the float path's THD+N floor at 0 dB gain. (A run the master's
    /// own xrun disturbed, which nothing tells the slave, is run again.)
    func testTheAnalyzerOnASlaveMeasuresTheNetworkPathAsFlat() throws {
        let rig = try startRig(networkLatency: 2)
        defer { rig.stop() }
        let path = ["--server", rig.slaveName, "--out", "system:playback_1", "--in", "system:capture_1", "--json"]
        func channel(_ output: String, _ event: String) -> [String: Any]? {
            (jsonLines(output).first { $0["event"] as? String == event }?["channels"] as? [[String: Any]])?.first
        }
        let flat: (Int32, String) -> Bool = { status, output in
            status == 0 && (channel(output, "response")?["response"] as? [[String: Double]])?.allSatisfy {
                abs($0["magnitude_db"] ?? 1) <= 0.001
            } == true
        }
        let response = try jasOnSlave(rig, ["analyze", "response", "--length", "1s"] + path, attempts: 3, until: flat)
        XCTAssertEqual(response.status, 0, response.output)
        let swept = try XCTUnwrap(channel(response.output, "response"), response.output)
        XCTAssertEqual(swept["delay_frames"] as? Int, 3 * 256 + rig.masterLoopFrames, "the network's -l 2 plus a period, and the master's loop")
        for point in try XCTUnwrap(swept["response"] as? [[String: Double]]) {
            XCTAssertEqual(try XCTUnwrap(point["magnitude_db"]), 0, accuracy: 0.001, "\(point)")
            XCTAssertEqual(try XCTUnwrap(point["phase_deg"]), 0, accuracy: 0.01, "\(point)")
        }
        let thd = try jasOnSlave(rig, ["analyze", "thd"] + path, attempts: 3) { status, output in
            status == 0 && (channel(output, "thd")?["thd_n_db"] as? Double ?? 0) < -120
        }
        XCTAssertEqual(thd.status, 0, thd.output)
        let stepped = try XCTUnwrap(channel(thd.output, "thd"), thd.output)
        XCTAssertEqual(try XCTUnwrap(stepped["gain_db"] as? Double), 0, accuracy: 0.001)
        XCTAssertLessThan(try XCTUnwrap(stepped["thd_n_db"] as? Double), -120, thd.output)
    }

    func testAMasterRestartUnderRecordAndMonitorIsALoggedGapAndTheConnectionsComeBack() throws {
        let rig = try startRig()
        let folder = NSTemporaryDirectory() + "jas-netjack-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let player = try slaveJas(rig, ["play", "--server", rig.slaveName, "--name", "source", "--port", "system:playback_1",
                                        "--mix", "--signal", "noise", "--json"])
        let monitor = try slaveJas(rig, ["monitor", "--server", rig.slaveName, "--category", "playAndRecord", "--json"])
        XCTAssertTrue(waitUntil(timeout: 10) { !player.events("routeChange").isEmpty && !monitor.events("routeChange").isEmpty },
                      player.errors.text + monitor.errors.text)
        let take = "\(folder)/take.wav"
        let recorder = try slaveJas(rig, ["record", "--server", rig.slaveName, "--ports", "system:capture_1", "--output", take,
                                          "--for", "10", "--json"])
        XCTAssertTrue(waitUntil(timeout: 10) { !recorder.events("recording").isEmpty }, recorder.errors.text)
        // The player's and the monitor's connections, once both are made.
        var before: [String: [String]] = [:]
        XCTAssertTrue(waitUntil(timeout: 10) {
            before = (try? self.slaveConnections(rig)) ?? [:]
            return before["system:playback_1"]?.contains("source:out_1") == true
                && before.contains { $0.key.hasPrefix("jas-monitor") && !$0.value.isEmpty }
        }, "the player's and the monitor's ports are connected: \(before)")
        let monitorOut = before.filter { $0.key.hasPrefix("jas-monitor") && !$0.value.isEmpty }

        let routeChangesBefore = monitor.events("routeChange").count
        let playerRouteChangesBefore = player.events("routeChange").count
        try rig.restartMaster(hard: true, downtime: 1)
        // The net driver makes the slave's system: ports anew; every session connects to them again.
        XCTAssertTrue(waitUntil(timeout: 10) {
            let after = (try? self.slaveConnections(rig)) ?? [:]
            return after["system:playback_1"]?.contains("source:out_1") == true
                && monitorOut.keys.allSatisfy { after[$0] == monitorOut[$0] }
        }, "connections after the master's restart: \((try? slaveConnections(rig)) ?? [:]), before: \(before)")
        // Said as a route change: the device went and came back (two events),
        // or, when its ports were made anew within one burst, the same
        // route's configuration changed.
        let reasons = monitor.events("routeChange").dropFirst(routeChangesBefore).compactMap { $0["reason"] as? String }
        XCTAssertTrue(["newDeviceAvailable", "routeConfigurationChange"].contains(reasons.last ?? ""), "\(reasons)")
        if reasons.contains("oldDeviceUnavailable") { XCTAssertEqual(reasons.last, "newDeviceAvailable", "\(reasons)") }
        print("master restart: the monitor's route changes \(reasons)")
        // The player, like the seeds' playback apps, pauses when its output device goes away
        // (`oldDeviceUnavailable`: its named ports went in one burst and came back in another)
        // and plays on when someone says so: SIGUSR1, as a person pressing play. When its ports
        // were made anew within one burst, it never paused; the capture ports' going is no
        // device of its route (it paused for that once, and never heard the ports come back).
        var playerReasons: [String] = []
        XCTAssertTrue(waitUntil(timeout: 10) {
            playerReasons = player.events("routeChange").dropFirst(playerRouteChangesBefore).compactMap { $0["reason"] as? String }
            return ["newDeviceAvailable", "routeConfigurationChange"].contains(playerReasons.last ?? "")
        }, "the player's route changes: \(playerReasons)")
        if playerReasons.contains("oldDeviceUnavailable") {
            XCTAssertEqual(playerReasons.last, "newDeviceAvailable", "\(playerReasons)")
            kill(player.process.processIdentifier, SIGUSR1)
        }
        print("master restart: the player's route changes \(playerReasons)")

        XCTAssertTrue(recorder.finish(timeout: 30), "the take did not end: " + recorder.errors.text)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.errors.text)
        let summary = try XCTUnwrap(recorder.events("summary").first, recorder.errors.text)
        XCTAssertEqual(summary["frames_written"] as? Int, 10 * 48000, "the timeline is whole: \(summary)")
        let log = logEvents("\(folder)/take.log")
        let gaps = gapRanges(log)
        XCTAssertFalse(gaps.isEmpty, "the master's absence is a logged gap: \(log)")
        let downtime = gaps.map(\.count).reduce(0, +)
        print("master restart on a netjack2 slave: gaps \(log.filter { $0["event"] as? String == "gap" })")
        XCTAssertGreaterThanOrEqual(downtime, 48000, "at least the second the master was away: \(log)")
        XCTAssertTrue(log.contains { $0["event"] as? String == "gap" && $0["reason"] as? String == "stall" }, "\(log)")
        // Ports the net driver made anew after the stall were lost after it,
        // not during it (a source-lost stretch may hold later skipped cycles).
        let stallEnd = gapRanges(log.filter { $0["reason"] as? String == "stall" }).map(\.upperBound).min() ?? 0
        for lost in gapRanges(log.filter { $0["reason"] as? String == "source-lost" }) {
            XCTAssertGreaterThanOrEqual(lost.lowerBound, stallEnd, "\(log)")
        }

        // Bit-exact again once the master is back: the player's noise, sample
        // for sample, stretch by stretch between the later gaps (cycles jackd
        // skipped while the link settled).
        let recorded = try SoundFileReader(path: take).readAll()
        let back = gapRanges(log.filter { ["stall", "source-lost"].contains($0["reason"] as? String ?? "") })
            .map(\.upperBound).max()
        let match = PlayedNoise.match(recorded, from: try XCTUnwrap(back), gaps: gaps, searchAhead: 10 * 48000)
        XCTAssertEqual(match.unmatched, [], "samples from these frames on are none of jas play's")
        // A late cycle (an xrun) may have a period read half-written; without one, nothing differs.
        // The master's own failed cycles count too: its log says `Process error` for each, and they reach
        // the slave as stale periods without an xrun there (rehearsal 41: 7 of them, 3,584 samples).
        let xruns = try XCTUnwrap(summary["xruns"] as? Int)
        let masterFailures = rig.master.log.components(separatedBy: "ProcessGraphAsyncMaster: Process error").count - 1
        let disturbances = xruns + masterFailures
        XCTAssertLessThanOrEqual(match.differing, disturbances * 2 * 256, "master failures \(masterFailures), \(summary)")
        // Silence where the recorder's source was back before the player played into it again:
        // the player's own reconnection, or its pause until the SIGUSR1 above (up to 7,424
        // samples beside a busy core).
        XCTAssertLessThanOrEqual(match.silent, 48000, "\(summary)")
        XCTAssertGreaterThan(match.compared, 48000 * 2, "\(summary)")
        // netjack2 may hand on once more what the slave last received before
        // its master went: a period from before the stall, then the noise
        // where it is now.
        XCTAssertLessThanOrEqual(match.jumps.count, 2 + 2 * disturbances, "jumps at \(match.jumps) \(summary)")
        print("after the master's return: \(match.compared) samples compared, \(match.differing) differ, \(match.silent) silent, "
              + "jumps at \(match.jumps); xruns \(xruns), master failures \(masterFailures)")
        monitor.interrupt()
        player.interrupt()
    }

    func testASlaveRestartIsAMediaServicesReset() throws {
        let rig = try startRig()
        let monitor = try slaveJas(rig, ["monitor", "--server", rig.slaveName, "--json"])
        XCTAssertTrue(waitUntil(timeout: 10) { !monitor.events("routeChange").isEmpty }, monitor.errors.text)
        try rig.restartSlave(hard: true, downtime: 0.5)
        XCTAssertTrue(waitUntil(timeout: 20) { !monitor.events("mediaServicesWereReset").isEmpty },
                      "\(monitor.lines.objects) \(monitor.errors.text)")
        XCTAssertFalse(monitor.events("mediaServicesWereLost").isEmpty)
        XCTAssertTrue(waitUntil(timeout: 10) {
            ((try? self.slaveConnections(rig)) ?? [:])["system:playback_1"]?.contains { $0.hasPrefix("jas-monitor") } == true
        }, "the monitor's output is not connected again")
        XCTAssertTrue(monitor.interrupt(), monitor.errors.text)
    }

    func testTwoSessionsOnTheSlaveArbitrateAsOnALocalServer() throws {
        let rig = try startRig()
        let first = try slaveJas(rig, ["play", "--server", rig.slaveName, "--name", "A", "--port", "system:playback_1", "--json"])
        XCTAssertTrue(waitUntil(timeout: 10) { !first.events("routeChange").isEmpty }, first.errors.text)
        let second = try slaveJas(rig, ["play", "--server", rig.slaveName, "--name", "B", "--port", "system:playback_2",
                                        "--for", "2", "--notify", "--json"])
        func interruptions(_ type: String) -> [[String: Any]] {
            first.events("interruption").filter { $0["type"] as? String == type }
        }
        XCTAssertTrue(waitUntil(timeout: 10) { interruptions("began").count == 1 }, "\(first.lines.objects)")
        XCTAssertTrue(waitUntil(timeout: 10) { interruptions("ended").count == 1 }, "\(first.lines.objects)")
        XCTAssertEqual(interruptions("ended").first?["options"] as? [String], ["shouldResume"])
        XCTAssertTrue(second.finish(timeout: 10))
        XCTAssertTrue(first.interrupt(), first.errors.text)
    }
}
