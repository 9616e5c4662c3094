import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
import XCTest

/// JACK's metadata store left damaged (an empty region file beside a whole
/// one, as a soak of killed servers left it): every JACK program of the user
/// dies of SIGBUS at start, jackd too. jas names it instead (exit status 2),
/// `jas metadata-store repair` removes it when nothing uses it, and the next
/// start works. On a machine of its own (a private /dev/shm), so this
/// machine's store is not touched.
final class MetadataStoreTests: JackTestCase {
    /// jackd in `machine`, once jack_lsp there reaches it.
    private func startReadyJackd(_ machine: SeparateMachine, name: String) throws -> MachineProgram {
        let log = NSTemporaryDirectory() + "jackd-\(name).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let jackd = try startJackd(machine, name: name, log: log)
        // Not before jackd's request socket exists: until then it is making its metadata store, and a
        // client that opens meanwhile joins a half-made Berkeley DB environment.
        let socket = machine.sharedMemoryPath + "/" + ServerProcess.requestSocketName(serverName: name)
        XCTAssertTrue(waitUntil(timeout: 15) { !jackd.isRunning || FileManager.default.fileExists(atPath: socket) },
                      "jackd '\(name)' made no request socket in the machine")
        var lsp = ""
        let answered = waitUntil(timeout: 15) {
            let result = try? self.run(machine.command(["jack_lsp", "-s", name]))
            lsp = result?.output ?? "jack_lsp did not run"
            return result?.status == 0
        }
        var stacks = ""
        if !answered, jackd.isRunning, FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") {
            stacks = (try? run(["/usr/bin/gdb", "-p", String(jackd.processIdentifier), "-batch", "-ex", "thread apply all bt"],
                               timeout: 60).output) ?? "gdb did not run"
        }
        XCTAssertTrue(answered, "jackd '\(name)' in the machine does not answer (running: \(jackd.isRunning)); jackd said: "
                      + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "nothing") + "; jack_lsp said: \(lsp); "
                      + "jackd's threads: " + String(stacks.suffix(8000)))
        return jackd
    }

    /// `jas record --json` of `server`'s first capture port in `machine`:
    /// the process, its JSON lines and its stderr.
    private func startRecorder(_ machine: SeparateMachine, server: String,
                               output path: String) throws -> (Process, LineCollector, LineCollector.Text) {
        let recorder = Process()
        let command = machine.command([jas, "record", "--json", "--server", server, "--ports", "system:capture_1",
                                       "--output", path])
        recorder.executableURL = URL(fileURLWithPath: command[0])
        recorder.arguments = Array(command.dropFirst())
        let output = Pipe()
        recorder.standardOutput = output
        let errors = Pipe()
        recorder.standardError = errors
        let errorLines = LineCollector.Text()
        errorLines.read(errors)
        let lines = LineCollector(output)
        try recorder.run()
        return (recorder, lines, errorLines)
    }

    /// A take under way (its `started` logged): `jas record` of a jackd on a
    /// machine of its own. Skips the test where no such machine can be made.
    private func startTake() throws -> RunningTake {
        let machine = try SeparateMachine()  // needs root: without it the test fails and says so
        let folder = temporaryFolder()
        let server = LoopbackServer.uniqueName()
        var jackd: MachineProgram?
        do {
            let started = try startReadyJackd(machine, name: server)
            jackd = started
            let (recorder, lines, errorLines) = try startRecorder(machine, server: server, output: "\(folder)/take.wav")
            let take = RunningTake(machine: machine, folder: folder, server: server, jackd: started, recorder: recorder,
                                   lines: lines, errorLines: errorLines)
            XCTAssertTrue(waitUntil(timeout: 15) { !take.events("started").isEmpty }, "\(lines.objects)")
            return take
        } catch {
            if let jackd, jackd.isRunning { kill(jackd.processIdentifier, SIGKILL); jackd.waitUntilExit() }
            try? FileManager.default.removeItem(atPath: folder)
            machine.stop()
            throw error
        }
    }

    /// A jack_lsp of `server` in `machine` killed inside the store
    /// (`StoreLockKill`): gdb's output, and the killed process.
    private func killAJackLspInsideTheStore(_ machine: SeparateMachine,
                                           server: String) throws -> (output: String, killed: Int32?) {
        let gdb = try run(machine.command(StoreLockKill.command(server: server)))
        XCTAssertTrue(StoreLockKill.stoppedAtTheLock(gdb.output), gdb.output)
        let killed = StoreLockKill.killedProcess(gdb.output)
        XCTAssertNotNil(killed, gdb.output)
        return (gdb.output, killed)
    }

    /// Fails the set-up (`SetupDidNotHold`) when a client still opens on
    /// `server` within 5 s: the kill did not leave the store's environment locked.
    private func assertTheStoreIsLocked(_ machine: SeparateMachine, server: String, gdb: String) throws {
        guard try run(machine.command(["timeout", "-s", "KILL", "5", "jack_lsp", "-s", server])).status != 0 else {
            throw SetupDidNotHold("the kill did not leave the store's environment locked: nothing checked; gdb said: "
                                  + gdb.suffix(300))
        }
    }

    /// Leaves `region` as the soak left it: empty, and not new (a minute old).
    private func damage(_ region: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(truncate(region, 0), 0, "truncate \(region)", file: file, line: line)
        var old = [timeval(tv_sec: time(nil) - 60, tv_usec: 0), timeval(tv_sec: time(nil) - 60, tv_usec: 0)]
        XCTAssertEqual(utimes(region, &old), 0, "utimes \(region)", file: file, line: line)
    }

    /// jackd in `machine`, started as the harness starts servers (a clean signal state; once started
    /// through Foundation's Process it sometimes did not answer after the whole suite).
    private func startJackd(_ machine: SeparateMachine, name: String, log: String? = nil) throws -> MachineProgram {
        try machine.spawn(["jackd", "-n", name, "-r", "-d", "dummy", "-r", "48000", "-p", "256"],
                          logPath: log ?? "/dev/null")
    }

    /// What the harness says of the store when one of its servers does not start.
    func testTheHarnessSaysWhatTheStoreIsWhenAServerDoesNotStart() throws {
        let root = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = MetadataStore(root: root)
        XCTAssertTrue(LoopbackServer.metadataStoreState(store).hasPrefix("no metadata store at \(store.path)"))
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: store.path + "/__db.001", contents: Data(count: 4096)))
        XCTAssertTrue(FileManager.default.createFile(atPath: store.path + "/__db.002", contents: Data()))
        damage(store.path + "/__db.002")
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "exec 3<\(store.path)/__db.001; exec sleep 30"]
        try holder.run()
        defer { holder.terminate(); holder.waitUntilExit() }
        var state = ""
        XCTAssertTrue(waitUntil {
            state = LoopbackServer.metadataStoreState(store)
            return state.contains("open in: sleep (\(holder.processIdentifier))")
        }, state)
        XCTAssertTrue(state.contains("damaged: __db.002 is empty beside __db.001 (4096 bytes)"), state)
        XCTAssertTrue(state.contains("servers of this user running: "), state)
    }

    func testADamagedStoreIsNamedNotCrashedOnAndTheRepairCuresIt() throws {
        continueAfterFailure = false
        let machine = try SeparateMachine()  // needs root: without it the test fails and says so
        defer { machine.stop() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let name = LoopbackServer.uniqueName()
        // A server makes the store; killed, it leaves it behind.
        let first = try startReadyJackd(machine, name: name)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let store = machine.sharedMemoryPath + "/jack_db-\(getuid())"
        let region = store + "/__db.002"
        XCTAssertTrue(FileManager.default.fileExists(atPath: region), "jackd made no store at \(store)")
        // Damaged as the soak left it: the region file empty, and not new.
        damage(region)
        // The damage is real: JACK's own tools die of it.
        let crashed = try run(machine.command(["sh", "-c", "jack_lsp -s \(name) >/dev/null 2>&1; echo status $?"]))
        XCTAssertTrue(crashed.output.contains("status 135"), "jack_lsp did not die of SIGBUS: \(crashed.output)")
        // jas names it and what to do, never dies of it.
        for command in [["status"], ["record", "--output", "\(folder)/take.wav", "--for", "1"], ["meter", "--for", "1"]] {
            let result = try run(machine.command([jas] + command + ["--server", name]))
            let said = "jas \(command.joined(separator: " ")) → \(result.status): \(result.output)"
            XCTAssertEqual(result.status, 2, said)
            XCTAssertTrue(result.output.contains("/dev/shm/jack_db-\(getuid())"), said)
            XCTAssertTrue(result.output.contains("__db.002 is empty"), said)
            XCTAssertTrue(result.output.contains("jas metadata-store repair"), said)
        }
        let check = try run(machine.command([jas, "metadata-store", "check"]))
        XCTAssertEqual(check.status, 1, check.output)
        // The repair removes it while nothing uses it; JACK makes it anew.
        let repair = try run(machine.command([jas, "metadata-store", "repair"]))
        XCTAssertEqual(repair.status, 0, repair.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store), repair.output)
        let second = try startJackd(machine, name: name)
        defer { if second.isRunning { kill(second.processIdentifier, SIGTERM); second.waitUntilExit() } }
        XCTAssertTrue(waitUntil(timeout: 15) { (try? self.run(machine.command([self.jas, "status", "--server", name])))?.status == 0 },
                      "jas status after the repair")
        XCTAssertEqual(try run(machine.command([jas, "metadata-store", "check"])).status, 0)
        // A store in use is not removed, even when damaged.
        damage(store + "/__db.002")
        let refused = try run(machine.command([jas, "metadata-store", "repair"]))
        XCTAssertEqual(refused.status, 2, refused.output)
        XCTAssertTrue(refused.output.contains("in use by jackd"), refused.output)
        XCTAssertTrue(FileManager.default.fileExists(atPath: store))
    }

    /// A take whose server restarts into a damaged store: the log says why
    /// the server cannot come back, the take waits with its timeline whole,
    /// and goes on once the store is repaired and the server is back.
    func testATakeWaitsThroughADamagedStoreAndResumesAfterTheRepair() throws {
        let take = try startTake()
        defer { take.stop() }
        let (machine, name, first, recorder, lines, errorLines) = (take.machine, take.server, take.jackd, take.recorder,
                                                                   take.lines, take.errorLines)
        let event = take.events
        // The server dies, and its store is left damaged.
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        // Damaged as the soak left it, once the recorder has let go of the store (its dead client
        // closed): a store truncated under a process that maps it is another failure (SIGBUS in it).
        XCTAssertTrue(waitUntil(timeout: 10) {
            !((try? String(contentsOfFile: "/proc/\(recorder.processIdentifier)/maps", encoding: .utf8)) ?? "jack_db")
                .contains("jack_db-")
        }, "the recorder still maps the metadata store")
        let region = machine.sharedMemoryPath + "/jack_db-\(getuid())/__db.002"
        damage(region)
        XCTAssertTrue(waitUntil(timeout: 15) {
            event("server_lost").contains { ($0["reason"] as? String ?? "").contains("metadata store") }
        }, "the log does not say why the server cannot come back: \(lines.objects)")
        XCTAssertTrue(recorder.isRunning, "the take ended (status \(recorder.isRunning ? 0 : recorder.terminationStatus), "
                      + "\(recorder.isRunning ? "" : "\(recorder.terminationReason)")): \(errorLines.text)")
        // Repaired (the recorder, waiting, holds no libjack), the server starts again and the take goes on.
        let repair = try run(machine.command([jas, "metadata-store", "repair"]))
        XCTAssertEqual(repair.status, 0, repair.output)
        let second = try startJackd(machine, name: name)
        defer { if second.isRunning { kill(second.processIdentifier, SIGTERM); second.waitUntilExit() } }
        XCTAssertTrue(waitUntil(timeout: 20) { !event("server_back").isEmpty }, "\(lines.objects)")
        kill(recorder.processIdentifier, SIGINT)
        recorder.waitUntilExit()
        lines.waitForEnd()
        let summary = try XCTUnwrap(event("summary").first, "\(lines.objects)")
        let gaps = event("gap")
        XCTAssertTrue(gaps.contains { $0["reason"] as? String == "server-restart" }, "\(gaps)")
        XCTAssertGreaterThan(summary["frames_written"] as? Int ?? 0, 0)
    }

    /// A server that restarts into a store left locked (a JACK program
    /// killed while it held one of libdb's locks; here jack_lsp, killed by
    /// gdb right after it took the environment's mutex while a jackd ran):
    /// the new jackd sleeps on that lock, for ever. jas
    /// names it within seconds (exit 2), instead of an open that hangs
    /// for its 15 s bound; `check` and `repair` say it, and once the repair
    /// removed the store and the sleeping jackd is killed, a jackd serves.
    func testAServerAsleepOnALockedStoreIsNamedAndTheRepairCuresIt() throws {
        let machine = try SeparateMachine()  // needs root: without it the test fails and says so
        defer { machine.stop() }
        let name = LoopbackServer.uniqueName()
        let first = try startReadyJackd(machine, name: name)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL); first.waitUntilExit() } }
        let gdb = try killAJackLspInsideTheStore(machine, server: name)
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let hung = try startJackd(machine, name: name)
        defer { if hung.isRunning { kill(hung.processIdentifier, SIGKILL); hung.waitUntilExit() } }
        // It sleeps on the lock before its socket or after (registering its ports), as libdb has it.
        let store = MetadataStore(root: machine.sharedMemoryPath)
        guard waitUntil(timeout: 5, { !store.lockWaits(ofProcess: hung.processIdentifier).isEmpty }) else {
            throw SetupDidNotHold("the kill did not leave jackd asleep on the store: nothing checked; gdb said: "
                                  + gdb.output.suffix(300))
        }
        // The lock's holder, as glibc notes it in the mutex: the main thread of the jack_lsp gdb killed, gone.
        let killed = gdb.killed
        let waits = store.lockWaits(ofProcess: hung.processIdentifier)
        XCTAssertTrue(waits.contains { $0.owner == killed && $0.ownerIsGone }, "\(waits)")
        let started = ContinuousClock.now
        let status = try run(machine.command([jas, "status", "--server", name]))
        XCTAssertEqual(status.status, 2, status.output)
        XCTAssertTrue(status.output.contains("is locked by a program killed inside it (jackd (pid \(hung.processIdentifier)"),
                      status.output)
        XCTAssertTrue(status.output.contains("jas metadata-store repair"), status.output)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10), "jas status took its open's bound")
        let check = try run(machine.command([jas, "metadata-store", "check"]))
        XCTAssertEqual(check.status, 1, check.output)
        XCTAssertTrue(check.output.contains("is locked (jackd (pid \(hung.processIdentifier)"), check.output)
        XCTAssertTrue(check.output.contains("held by thread \(killed ?? 0), which no longer exists"), check.output)
        let repair = try run(machine.command([jas, "metadata-store", "repair"]))
        XCTAssertEqual(repair.status, 0, repair.output)
        XCTAssertTrue(repair.output.contains("removed the locked store"), repair.output)
        XCTAssertTrue(repair.output.contains("kill -KILL \(hung.processIdentifier)"), repair.output)
        // As the repair says: the jackd asleep on the old store is killed, and one started again serves.
        kill(hung.processIdentifier, SIGKILL)
        hung.waitUntilExit()
        let second = try startReadyJackd(machine, name: name)
        defer { if second.isRunning { kill(second.processIdentifier, SIGTERM); second.waitUntilExit() } }
        let after = try run(machine.command([jas, "status", "--server", name]))
        XCTAssertEqual(after.status, 0, after.output)
    }

    /// A lock that only an open meets (the store's environment mutex, held
    /// by a jack_lsp killed inside it while the server's jackd runs on): no
    /// program sleeps on it, so only an open finds it. `check` finds it by a
    /// probe (a jas process of its own that opens the store), names the
    /// killed holder, and `repair` removes the store, naming the jackd that
    /// still has it open; a client then opens on that same running server,
    /// as a logger restarted by systemd after the unit's repair would.
    func testALockOnlyAnOpenMeetsIsFoundByTheProbeAndRepaired() throws {
        let machine = try SeparateMachine()  // needs root: without it the test fails and says so
        defer { machine.stop() }
        let name = LoopbackServer.uniqueName()
        let jackd = try startReadyJackd(machine, name: name)
        defer { if jackd.isRunning { kill(jackd.processIdentifier, SIGKILL); jackd.waitUntilExit() } }
        let whole = try run(machine.command([jas, "metadata-store", "check"]))
        XCTAssertEqual(whole.status, 0, whole.output)
        let gdb = try killAJackLspInsideTheStore(machine, server: name)
        let killed = gdb.killed
        try assertTheStoreIsLocked(machine, server: name, gdb: gdb.output)
        XCTAssertTrue(MetadataStore(root: machine.sharedMemoryPath).lockWaits(ofProcess: jackd.processIdentifier).isEmpty,
                      "jackd sleeps on the lock too: not the lock only an open meets")
        let check = try run(machine.command([jas, "metadata-store", "check"]))
        XCTAssertEqual(check.status, 1, check.output)
        XCTAssertTrue(check.output.contains("is locked (an open sleeps on a lock in __db."), check.output)
        XCTAssertTrue(check.output.contains("held by thread \(killed ?? 0), which no longer exists"), check.output)
        let repair = try run(machine.command([jas, "metadata-store", "repair"]))
        XCTAssertEqual(repair.status, 0, repair.output)
        XCTAssertTrue(repair.output.contains("removed the locked store"), repair.output)
        XCTAssertTrue(repair.output.contains("still using the removed store: jackd (pid \(jackd.processIdentifier))"),
                      repair.output)
        let status = try run(machine.command([jas, "status", "--server", name]))
        XCTAssertEqual(status.status, 0, status.output)
        let after = try run(machine.command([jas, "metadata-store", "check"]))
        XCTAssertEqual(after.status, 0, after.output)
    }

    /// A take whose process still has the store open when a program killed
    /// inside it leaves its environment's lock held: when the server dies,
    /// libjack's close of the last client closes the store too, and sleeps on
    /// that lock for ever. The lane's bound ends the wait: the recorder
    /// finishes its file, says that it is the store's lock (not jack2 #395),
    /// and exits with 75 for its supervisor. (In a process of its own: libjack
    /// cannot be used again in the process it happens in.)
    func testARecorderStuckClosingInALockedStoreSaysSoAndExitsForItsSupervisor() throws {
        let take = try startTake()
        defer { take.stop() }
        let (machine, name, first, recorder, lines, errorLines) = (take.machine, take.server, take.jackd, take.recorder,
                                                                   take.lines, take.errorLines)
        let event = take.events
        let gdb = try killAJackLspInsideTheStore(machine, server: name)
        try assertTheStoreIsLocked(machine, server: name, gdb: gdb.output)
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        XCTAssertTrue(waitUntil(timeout: 40) { !recorder.isRunning }, "the recorder still runs: \(errorLines.text)")
        recorder.waitUntilExit()
        lines.waitForEnd()
        XCTAssertEqual(recorder.terminationStatus, 75, errorLines.text)
        XCTAssertTrue(errorLines.text.contains("libjack sleeps on a lock in JACK's metadata store (/dev/shm/jack_db-"),
                      errorLines.text)
        XCTAssertFalse(errorLines.text.contains("#395"), errorLines.text)
        let summary = try XCTUnwrap(event("summary").first, "\(lines.objects)")
        XCTAssertGreaterThan(summary["frames_written"] as? Int ?? 0, 0)
    }
}

/// A `jas record` take on a jackd of a machine of its own (`startTake`).
private struct RunningTake {
    let machine: SeparateMachine
    let folder: String
    let server: String
    let jackd: MachineProgram
    let recorder: Process
    let lines: LineCollector
    let errorLines: LineCollector.Text

    /// The recorder's JSON lines of event `name` so far.
    func events(_ name: String) -> [[String: Any]] { lines.objects.filter { $0["event"] as? String == name } }

    /// Kills what still runs, removes the take's folder and the machine.
    func stop() {
        if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) }
        if jackd.isRunning { kill(jackd.processIdentifier, SIGKILL); jackd.waitUntilExit() }
        try? FileManager.default.removeItem(atPath: folder)
        machine.stop()
    }
}
