import Foundation
import JackRuntime
import JackTestSupport
import LoopbackHarness
import XCTest

/// JACK's server registry (`/dev/shm/jack-shm-registry`) removed while no
/// jackd runs, and made anew by the next one: libjack in a running program
/// stays attached to the old one and can never open a client again. The
/// long-running jas commands say so and start themselves again, and are back
/// within 3 s of the new server accepting clients. On a machine of its own
/// (a private /dev/shm), so this machine's registry is not touched.
final class RegistryReplacedTests: JackTestCase {
    /// A jas command started in `machine`: its JSON lines and its stderr.
    private struct Command {
        let name: String
        let process: Process
        let lines: LineCollector
        let errors: LineCollector.Text
    }

    private func start(_ machine: SeparateMachine, _ arguments: [String]) throws -> Command {
        let process = Process()
        let command = machine.command([jas] + arguments)
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let text = LineCollector.Text()
        text.read(errors)
        let lines = LineCollector(output)
        try process.run()
        return Command(name: arguments[0], process: process, lines: lines, errors: text)
    }

    private func events(_ command: Command, _ name: String) -> [[String: Any]] {
        command.lines.objects.filter { $0["event"] as? String == name }
    }

    /// jackd (dummy, two loopback ports) in `machine`, once jack_lsp there reaches it.
    private func startJackd(_ machine: SeparateMachine, name: String) throws -> MachineProgram {
        let jackd = try machine.spawn(["jackd", "-n", name, "-r", "-L", "2", "-d", "dummy", "-r", "48000", "-p", "256"],
                                      logPath: "/dev/null")
        XCTAssertTrue(waitUntil(timeout: 15) { (try? self.run(machine.command(["jack_lsp", "-s", name])))?.status == 0 },
                      "jackd '\(name)' in the machine does not answer (running: \(jackd.isRunning))")
        return jackd
    }

    func testTheToolsComeBackWhenTheRegistryIsReplacedUnderThem() throws {
        continueAfterFailure = false
        // Needs root (a mount namespace); without one the test fails and says so, it does not skip.
        let machine = try SeparateMachine()
        defer { machine.stop() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = LoopbackServer.uniqueName()
        var jackd = try startJackd(machine, name: server)
        let commands = [
            try start(machine, ["monitor", "--server", server, "--json"]),
            try start(machine, ["record", "--server", server, "--ports", "loopback:capture_1",
                                "--output", "\(folder)/take.wav", "--json"]),
            try start(machine, ["meter", "--server", server, "--ports", "loopback:capture_1", "--interval", "0.1", "--json"]),
        ]
        let (monitor, recorder, meter) = (commands[0], commands[1], commands[2])
        defer {
            for command in commands where command.process.isRunning { kill(command.process.processIdentifier, SIGKILL) }
            if jackd.isRunning { kill(jackd.processIdentifier, SIGKILL) }
        }
        XCTAssertTrue(waitUntil(timeout: 15) {
            !self.events(monitor, "routeChange").isEmpty && !self.events(recorder, "started").isEmpty
                && !self.events(meter, "reading").isEmpty
        }, "the commands did not start: " + commands.map { "\($0.name): \($0.errors.text)" }.joined(separator: "; "))
        let pids = commands.map(\.process.processIdentifier)

        // The server stops; its registry is removed while none runs; the same server starts again.
        kill(jackd.processIdentifier, SIGTERM)
        jackd.waitUntilExit()
        let registry = machine.sharedMemoryPath + "/jack-shm-registry"
        XCTAssertEqual(unlink(registry), 0, "remove \(registry): \(String(cString: strerror(errno)))")
        let before = (route: events(monitor, "routeChange").count, started: events(recorder, "started").count,
                      readings: events(meter, "reading").count)
        jackd = try startJackd(machine, name: server)
        let accepted = ContinuousClock.now

        // Each command says why, and is back: the monitor's session routed again, the take started
        // again in its next file, the meter reading again.
        XCTAssertTrue(waitUntil(timeout: 10) {
            self.events(monitor, "routeChange").count > before.route && self.events(recorder, "started").count > before.started
                && self.events(meter, "reading").count > before.readings + 2
        }, "not back: " + commands.map { "\($0.name): \($0.errors.text)" }.joined(separator: "; "))
        let back = ContinuousClock.now - accepted
        print("RegistryReplacedTests: monitor, record and meter back \(back) after the new server accepted clients")
        XCTAssertLessThan(back, .seconds(3), "back \(back) after the new server accepted clients")
        for command in commands {
            XCTAssertTrue(command.process.isRunning, "jas \(command.name) exited: \(command.errors.text)")
            // "removed" when it looked while no jackd ran, "replaced by a new one" once the new jackd made its own.
            XCTAssertTrue(command.errors.text.contains("JACK's server registry /dev/shm/jack-shm-registry was removed")
                          || command.errors.text.contains("/dev/shm/jack-shm-registry was replaced by a new one"),
                          "jas \(command.name) said: \(command.errors.text)")
            XCTAssertTrue(command.errors.text.contains("starting again in a new process with the same arguments"),
                          command.errors.text)
        }
        XCTAssertEqual(commands.map(\.process.processIdentifier), pids, "the same processes (re-executed), for a supervisor")
        // The process before let go of what it opened: the first file is not open in the new one.
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(recorder.process.processIdentifier)/fd")) ?? [])
            .compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(recorder.process.processIdentifier)/fd/\($0)") }
        XCTAssertFalse(open.contains { $0.hasSuffix("/take.wav") || $0.hasSuffix("/take.log") }, "\(open)")
        XCTAssertTrue(open.contains { $0.hasSuffix("/take-part2.wav") }, "\(open)")
        // The session said it as a media-services loss, naming the registry.
        XCTAssertTrue(events(monitor, "mediaServicesWereLost").contains {
            ($0["reason"] as? String ?? "").contains("jack-shm-registry")
        }, "\(events(monitor, "mediaServicesWereLost"))")
        // The take: the first file's log says why it stopped, the next file's why the logger started again,
        // and the manifest lists both.
        let first = try String(contentsOfFile: "\(folder)/take.log", encoding: .utf8)
        XCTAssertTrue(jsonLines(first).contains {
            $0["event"] as? String == "stopped" && ($0["reason"] as? String ?? "").contains("jack-shm-registry")
        }, first)
        let second = try String(contentsOfFile: "\(folder)/take-part2.log", encoding: .utf8)
        XCTAssertTrue(jsonLines(second).contains {
            $0["event"] as? String == "restarted" && ($0["reason"] as? String ?? "").contains("jack-shm-registry")
        }, second)
        let manifest = jsonLines(try String(contentsOfFile: "\(folder)/take.manifest.jsonl", encoding: .utf8))
        XCTAssertEqual(manifest.filter { $0["event"] as? String == "opened" }.compactMap { $0["path"] as? String },
                       ["take.wav", "take-part2.wav"])
        // It ends as usual.
        kill(recorder.process.processIdentifier, SIGINT)
        recorder.process.waitUntilExit()
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.errors.text)
    }

    /// The session's own check, without a server: the mapping in
    /// `/proc/self/maps` against the file on disk.
    func testTheMappedRegistryIsToldFromTheFileOnDisk() {
        let maps = """
            7f1159a30000-7f1159a49000 r--p 00000000 fe:00 2359                       /usr/lib/libjack.so.0.1.0
            7f1159a49000-7f1159a5b000 rw-s 00000000 00:1b 2                          /dev/shm/jack-shm-registry
            """
        let attached = RegistryAttachment.mapped(in: Substring(maps))
        XCTAssertEqual(attached, RegistryAttachment(device: "00:1b", inode: 2, removed: false))
        let device = UInt64(0x1b)  // major 0, minor 0x1b
        XCTAssertFalse(attached!.isReplaced(byFileWith: (device, 2)))
        XCTAssertTrue(attached!.isReplaced(byFileWith: (device, 16)), "a new registry at the same path")
        XCTAssertTrue(attached!.isReplaced(byFileWith: nil), "no registry at the path")
        let removed = RegistryAttachment.mapped(in: Substring(maps.replacingOccurrences(of: "registry", with: "registry (deleted)")))
        XCTAssertEqual(removed?.removed, true)
        XCTAssertTrue(removed!.isReplaced(byFileWith: (device, 2)), "removed, though a file of the same inode came")
        XCTAssertNil(RegistryAttachment.mapped(in: "7f1159a30000-7f1159a49000 r--p 00000000 fe:00 2359 /usr/lib/libjack.so.0"),
                     "nothing attached (no client opened yet, or PipeWire's JACK)")
        XCTAssertEqual(RegistryAttachment.deviceName(UInt64(0xfe) << 8 | 0x01), "fe:01")
    }
}
