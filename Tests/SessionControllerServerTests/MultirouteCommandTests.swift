import Foundation
import JackTestSupport
import LoopbackHarness
import XCTest

/// `jas play --route` and `jas status` as separate processes against a real
/// jackd with simulated devices.
final class MultirouteCommandTests: JackTestCase {
    private func startPlayer(_ server: LoopbackServer, _ arguments: [String]) throws -> (Process, LineCollector) {
        let output = Pipe()
        let player = Process()
        player.executableURL = URL(fileURLWithPath: jas)
        player.arguments = ["play", "--server", server.name, "--json"] + arguments
        player.standardOutput = output
        player.standardError = FileHandle.nullDevice
        try player.run()
        return (player, LineCollector(output))
    }

    /// The streams `jas status --json` lists, by name.
    private func streams(_ server: LoopbackServer) throws -> [String: [String: Any]] {
        let status = try run([jas, "status", "--server", server.name, "--json"])
        XCTAssertEqual(status.status, 0, status.output)
        let object = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
        let list = object?["streams"] as? [[String: Any]] ?? []
        return Dictionary(list.map { ($0["name"] as? String ?? "?", $0) }, uniquingKeysWith: { first, _ in first })
    }

    func testPlayRoutesDistinctSignalsAndStatusShowsTheStreams() throws {
        let server = try startServer()
        var headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        defer { headphones.unplug() }
        let hdmi = try SimulatedDevice(name: "hdmi", serverName: server.name, type: .HDMI)
        defer { hdmi.unplug() }
        let (player, lines) = try startPlayer(server, ["--name", "dj", "--route", "cue=headphones",
                                                       "--route", "tv=hdmi:1", "--route", "main=system:playback_1,system:playback_2"])
        defer { if player.isRunning { player.terminate() } }
        XCTAssertTrue(waitUntil { (try? self.streams(server).count) == 3 }, "\(lines.objects)")
        let listed = try streams(server)
        XCTAssertEqual(listed["cue"]?["destination"] as? String, "headphones")
        XCTAssertEqual(listed["cue"]?["ports"] as? [String], ["dj:cue_L", "dj:cue_R"])
        XCTAssertEqual(listed["tv"]?["destination"] as? String, "hdmi")
        XCTAssertEqual(listed["tv"]?["channels"] as? [Int], [1])
        XCTAssertEqual(listed["main"]?["destination"] as? String, "system")
        XCTAssertEqual(listed["main"]?["channels"] as? [Int], [1, 2])
        XCTAssertEqual(listed["cue"]?["connected"] as? Bool, true)
        let text = try run([jas, "status", "--server", server.name])
        XCTAssertTrue(text.output.contains("dj: cue → headphones channels 1,2 via dj:cue_L, dj:cue_R"), text.output)

        // Each destination hears its stream; HDMI's second channel carries none.
        let probe = try LevelProbe(serverName: server.name,
                                   listeningTo: ["headphones:capture_1", "hdmi:capture_1", "hdmi:capture_2"])
        XCTAssertTrue(waitUntil {
            let levels = probe.levels(over: 0.1)
            return levels[0] > -30 && levels[1] > -30 && levels[2] < -150
        }, "\(probe.levels(over: 0.1))")

        // The cue's headphones go: the event names it, status says it, nothing else moves.
        headphones.unplug()
        XCTAssertTrue(waitUntil { lines.objects.contains { $0["reason"] as? String == "oldDeviceUnavailable" } },
                      "\(lines.objects)")
        let lost = try XCTUnwrap(lines.objects.first { $0["reason"] as? String == "oldDeviceUnavailable" })
        XCTAssertEqual(lost["streams"] as? [String], ["cue"])
        XCTAssertTrue(waitUntil { (try? self.streams(server)["cue"]?["connected"] as? Bool) == false })
        XCTAssertEqual(try streams(server)["tv"]?["connected"] as? Bool, true)
        XCTAssertTrue(waitUntil { probe.levels(over: 0.1)[1] > -30 }, "the HDMI stream plays on")

        headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        XCTAssertTrue(waitUntil { (try? self.streams(server)["cue"]?["connected"] as? Bool) == true }, "\(lines.objects)")
        let back = try XCTUnwrap(lines.objects.last { $0["reason"] as? String == "newDeviceAvailable" })
        XCTAssertEqual(back["streams"] as? [String], ["cue"])
        player.terminate()
        player.waitUntilExit()
    }

    func testBadRoutesAreRefusedNamingTheProblem() throws {
        let server = try startServer()
        let headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        defer { headphones.unplug() }
        let cases: [([String], String)] = [
            (["--route", "cue=nothing"], "nothing"),
            (["--route", "cue"], "NAME=DEST"),
            (["--route", "a=headphones:1", "--route", "b=headphones:1"], "already carries stream 'a'"),
            (["--route", "a=headphones:3"], "channels [3]"),
            (["--route", "a=headphones:playback_1,system:playback_1"], "headphones, system"),
            (["--route", "a=headphones", "--route", "a=system"], "its own NAME"),
            (["--route", "a=headphones", "--category", "record"], "multiRoute"),
        ]
        for (arguments, expected) in cases {
            let result = try run([jas, "play", "--server", server.name, "--for", "1"] + arguments)
            XCTAssertNotEqual(result.status, 0, "\(arguments)")
            XCTAssertTrue(result.output.contains(expected), "\(arguments): \(result.output)")
        }
        XCTAssertEqual(try streams(server).count, 0, "nothing left behind")
    }

    func testPlayerPausesWhenItsDeviceIsUnplugged() throws {
        let server = try startServer()
        let (player, lines) = try startPlayer(server, ["--name", "player"])
        defer { if player.isRunning { player.terminate() } }
        XCTAssertTrue(waitUntil { lines.objects.contains { $0["reason"] as? String == "categoryChange" } })
        let probe = try LevelProbe(serverName: server.name, listeningTo: ["player:out_1"])
        XCTAssertTrue(waitUntil { probe.levels(over: 0.1)[0] > -30 }, "\(lines.objects)")
        let headphones = try SimulatedDevice(name: "headphones", serverName: server.name, type: .headphones)
        XCTAssertTrue(waitUntil { lines.objects.contains { $0["reason"] as? String == "newDeviceAvailable" } })
        XCTAssertGreaterThan(probe.levels(over: 0.1)[0], -30, "plugging in lets playback continue")
        headphones.unplug()
        XCTAssertTrue(waitUntil { lines.objects.contains { $0["reason"] as? String == "oldDeviceUnavailable" } })
        XCTAssertTrue(waitUntil { probe.levels(over: 0.1)[0] < -150 }, "unplugging pauses the player")
        kill(player.processIdentifier, SIGUSR1)
        XCTAssertTrue(waitUntil { probe.levels(over: 0.1)[0] > -30 }, "SIGUSR1 resumes it")
    }
}
