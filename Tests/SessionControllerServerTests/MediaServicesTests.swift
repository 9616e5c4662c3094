import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
import Measurement
import Synchronization
import XCTest

/// The server going away for real (SIGTERM, SIGKILL, zombification) is a
/// media-services loss; its return is a reset the session survives.
final class MediaServicesTests: JackTestCase {
    private func measurementSession(_ server: LoopbackServer, render: @escaping RenderBlock) throws -> AudioSession {
        let session = AudioSession(clientName: "survivor", serverName: server.name, recordConsent: .givenByCaller)
        try session.setCategory(.playAndRecord, mode: .measurement)
        session.setPreferredInputPortNames(["loopback:capture_1", "loopback:capture_2"])
        session.setPreferredOutputPortNames(["loopback:playback_1", "loopback:playback_2"])
        session.setRenderBlock(render)
        return session
    }

    private func resets(_ recorder: EventRecorder) -> [MediaServicesReset] {
        recorder.events.compactMap { if case let .mediaServicesWereReset(reset) = $0 { reset } else { nil } }
    }

    private func losses(_ recorder: EventRecorder) -> Int {
        recorder.events.filter { if case .mediaServicesWereLost = $0 { true } else { false } }.count
    }

    func testSIGTERMAndRestartResetsInOrderAndTheLoopbackIsBitExactAgain() throws {
        let server = try startServer(period: 256)
        let signal = RealtimeLoopbackRecorder(signal: TestSignal(seed: 5), channels: 2, period: 256, cycles: 200)
        let session = try measurementSession(server, render: signal.renderBlock)
        defer { session.close() }
        let recorder = EventRecorder(session)
        try session.setActive(true)

        server.stop()
        XCTAssertTrue(waitUntil { self.losses(recorder) == 1 })
        XCTAssertFalse(session.isActive)
        _ = try startServer(name: server.name, period: 256)
        XCTAssertTrue(waitUntil(timeout: 10) { self.resets(recorder).count == 1 }, "\(recorder.events)")
        let kinds = recorder.events.compactMap { event -> String? in
            switch event {
            case .mediaServicesWereLost: "lost"
            case .mediaServicesWereReset: "reset"
            default: nil
            }
        }
        XCTAssertEqual(kinds, ["lost", "reset"])
        XCTAssertTrue(session.isActive)
        XCTAssertEqual(session.inputPortNames, ["survivor:in_1", "survivor:in_2"], "same client and port names")

        // Audio flows again, bit-exact, one period late. A window in which an
        // xrun skipped a cycle (graph changes after the reset cause them on the
        // dummy backend) is recorded again, up to three times; the comparison
        // itself never loosens.
        signal.arm()
        var analysis = LoopbackAnalysis.analyse(signal, maximumDelay: 2048)
        var xrunsInWindow = 0
        for attempt in 1...3 {
            let xrunsBefore = session.xrunCount
            if attempt > 1 { signal.recordAgain() }
            XCTAssertTrue(waitUntil(timeout: 10) { signal.isComplete })
            analysis = LoopbackAnalysis.analyse(signal, maximumDelay: 2048)
            xrunsInWindow = session.xrunCount - xrunsBefore
            let disturbed = xrunsInWindow > 0 || analysis.discontinuities > 0
            if analysis.isBitExact || !disturbed { break }
            print("window \(attempt) disturbed by an xrun (\(analysis)); recording it again")
        }
        XCTAssertEqual(analysis.delayFrames, 256)
        XCTAssertEqual(analysis.mismatches, 0)
        XCTAssertTrue(analysis.isBitExact, "\(analysis)")
        if analysis.lateSamples > 0 { XCTAssertGreaterThan(xrunsInWindow, 0, "late samples without an xrun: \(analysis)") }
    }

    /// The comeback tail (issue 38): after a clean stop jackd removes its
    /// metadata store once its socket is gone, and a new jackd makes it
    /// before its socket exists; libjack opens that store with every client,
    /// and Berkeley DB, finding it half made or half removed, waited 2-3 s
    /// (`__env_attach` yielding) in one comeback of a hundred. The session
    /// asks libjack nothing while the server's socket is absent, so no open
    /// can meet the store in either state, and comes back when it appears.
    func testAfterACleanStopTheSessionOpensNothingUntilTheServersSocketIsBack() throws {
        let server = try startServer(period: 256)
        let session = AudioSession(clientName: "unhurried", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback)
        let recorder = EventRecorder(session)
        try session.setActive(true)

        server.stop()   // SIGTERM: jackd removes its store as it exits
        XCTAssertTrue(waitUntil { self.losses(recorder) == 1 })
        let opensBefore = ClientLifecycle.shared.opensCalled
        // A negative wait: an open while the server is down is the failure.
        XCTAssertFalse(waitUntil(timeout: 1) { ClientLifecycle.shared.opensCalled > opensBefore },
                       "the session asked libjack for a client while no server's socket existed")
        let back = try startServer(name: server.name, period: 256)
        let backAt = Date()
        XCTAssertTrue(waitUntil(timeout: 5) { self.resets(recorder).count == 1 }, "\(recorder.events)")
        XCTAssertLessThan(Date().timeIntervalSince(backAt), 1.0, "woken by the socket, not by a backoff step or Berkeley DB")
        XCTAssertLessThanOrEqual(ClientLifecycle.shared.opensCalled - opensBefore, 10, "a few opens once the socket is there: the harness probe and the session")
        XCTAssertTrue(session.isActive)
        _ = back
    }

    func testSIGKILLAndRestartWithAnotherPeriodReappliesThePreference() throws {
        let server = try startServer(period: 256)
        let session = AudioSession(clientName: "prefers", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback)
        try session.setPreferredIOBufferDuration(0.005)   // 256 frames at 48 kHz
        let recorder = EventRecorder(session)
        try session.setActive(true)
        XCTAssertEqual(session.ioBufferFrames, 256)

        server.kill()
        XCTAssertTrue(waitUntil { self.losses(recorder) == 1 })
        _ = try startServer(name: server.name, period: 1024)
        XCTAssertTrue(waitUntil(timeout: 10) { self.resets(recorder).count == 1 }, "\(recorder.events)")
        let reset = try XCTUnwrap(resets(recorder).first)
        XCTAssertEqual(reset.previousIOBufferFrames, 256)
        XCTAssertEqual(reset.ioBufferFrames, 256, "the session asked for its preference again")
        XCTAssertTrue(reset.reactivated)
        XCTAssertEqual(session.ioBufferFrames, 256)
        XCTAssertEqual(session.ioBufferDuration, 256.0 / 48000, accuracy: 1e-12)
    }

    /// An active playback session named `clientName` whose server was
    /// stopped, once its reconnect loop is past the backoff's doubling (50 ms
    /// up to its 1 s cap: five pauses).
    private func reconnectingAtTheCap(_ clientName: String) throws -> (LoopbackServer, AudioSession, EventRecorder) {
        let server = try startServer()
        let session = AudioSession(clientName: clientName, serverName: server.name)
        try session.setCategory(.playback)
        let recorder = EventRecorder(session)
        try session.setActive(true)
        server.stop()
        XCTAssertTrue(waitUntil { self.losses(recorder) == 1 })
        XCTAssertTrue(waitUntil(timeout: 10) { session.reconnectAttempts >= 6 }, "attempts: \(session.reconnectAttempts)")
        return (server, session, recorder)
    }

    func testServerGoneNoSpinNoGrowthPromptReconnect() throws {
        let (server, session, recorder) = try reconnectingAtTheCap("patient")
        defer { session.close() }
        // Four attempts at the cap.
        let cpuBefore = ProcessStats.cpuSeconds, memoryBefore = ProcessStats.residentBytes
        let threadsBefore = ProcessStats.threads
        let attemptsBefore = session.reconnectAttempts, measuredFrom = ContinuousClock.now
        XCTAssertTrue(waitUntil(timeout: 15) { session.reconnectAttempts >= attemptsBefore + 4 },
                      "attempts: \(session.reconnectAttempts)")
        let measured = ContinuousClock.now - measuredFrom
        let cpuSpent = ProcessStats.cpuSeconds - cpuBefore
        XCTAssertGreaterThan(measured, .seconds(2.5), "four attempts at the backoff's cap take about 3 s, not less")
        XCTAssertLessThan(cpuSpent, 0.25, "the retry loop sleeps between attempts")
        XCTAssertLessThan(ProcessStats.residentBytes - memoryBefore, 4 << 20)
        XCTAssertLessThanOrEqual(ProcessStats.threads, threadsBefore, "no thread per retry")

        let back = try startServer(name: server.name)
        let backAt = Date()
        XCTAssertTrue(waitUntil(timeout: 5) { self.resets(recorder).count == 1 })
        XCTAssertLessThan(Date().timeIntervalSince(backAt), 1.2, "within one backoff step of the server's return")
        XCTAssertTrue(session.isActive)
        _ = back
    }

    func testACloseEndsTheReconnectLoopInTheMiddleOfItsPause() throws {
        let (_, session, _) = try reconnectingAtTheCap("closing")
        // Just after an attempt at the cap: a full pause lies ahead.
        let attempts = session.reconnectAttempts
        XCTAssertTrue(waitUntil(timeout: 3) { session.reconnectAttempts > attempts })
        XCTAssertEqual(session.reconnectsEnded, 0)
        let closedAt = ContinuousClock.now
        session.close()
        XCTAssertTrue(waitUntil(timeout: 3) { session.reconnectsEnded == 1 })
        let ended = ContinuousClock.now - closedAt
        XCTAssertLessThan(ended, .milliseconds(500), "the close interrupts the pause; it does not wait out its second")
    }

    func testSelftestLoopGoesOnThroughAServerRestart() throws {
        let server = try startServer(period: 256)
        let output = Pipe()
        let selftest = Process()
        selftest.executableURL = URL(fileURLWithPath: jas)
        selftest.arguments = ["selftest", "--server", server.name, "--loop", "--duration", "0.5", "--json"]
        selftest.standardOutput = output
        selftest.standardError = FileHandle.nullDevice
        try selftest.run()
        defer { if selftest.isRunning { selftest.terminate() } }
        let lines = LineCollector(output)
        func rounds() -> [[String: Any]] { lines.objects.filter { $0["event"] as? String == "round" } }
        XCTAssertTrue(waitUntil(timeout: 20) { rounds().count >= 2 }, "\(lines.objects)")

        let lostKinds: Set = ["mediaServicesWereLost", "serverUnreachable"]
        let backKinds: Set = ["mediaServicesWereReset", "serverBack"]
        func index(of kinds: Set<String>) -> Int? {
            lines.objects.firstIndex { kinds.contains($0["event"] as? String ?? "") }
        }
        server.stop()
        // The server comes back once the loop has said it is gone.
        XCTAssertTrue(waitUntil(timeout: 10) { index(of: lostKinds) != nil }, "\(lines.objects)")
        _ = try startServer(name: server.name, period: 256)
        XCTAssertTrue(waitUntil(timeout: 30) {
            guard let back = index(of: backKinds) else { return false }
            return lines.objects[back...].filter { $0["event"] as? String == "round" }.count >= 2
        }, "\(lines.objects)")
        let lost = try XCTUnwrap(index(of: lostKinds), "the loss is said")
        let back = try XCTUnwrap(index(of: backKinds), "the return is said")
        XCTAssertLessThan(lost, back)
        // A round fails only when xruns spoilt all three of its attempts (on
        // this loaded 2-core machine, right after a restart): never with a
        // sample that differs.
        let failed = rounds().filter { $0["passed"] as? Bool != true }
        XCTAssertTrue(failed.allSatisfy { $0["mismatches"] as? Int == 0 && ($0["xruns"] as? Int ?? 0) > 0 }, "\(failed)")
        XCTAssertLessThanOrEqual(failed.count, 2, "\(rounds())")
        XCTAssertEqual(rounds().map { $0["round"] as? Int }, Array(1...rounds().count).map { Optional($0) })

        kill(selftest.processIdentifier, SIGINT)
        XCTAssertTrue(waitUntil(timeout: 10) { !selftest.isRunning }, "Ctrl-C ends the loop, also in mid-round")
        if selftest.isRunning { kill(selftest.processIdentifier, SIGKILL) }
        selftest.waitUntilExit()
        XCTAssertTrue(lines.waitForEnd())
        let failedInAll = rounds().filter { $0["passed"] as? Bool != true }
        XCTAssertEqual(selftest.terminationStatus, failedInAll.isEmpty ? 0 : 1, "the status says whether every round passed")
    }

    /// `AudioSession.waitForServer`: false once its limit passed with no
    /// server, true once one started meanwhile (woken by its socket, not at
    /// the end of a one-second step), and it never starts one itself.
    func testWaitForServerNeverStartsOneAndReturnsWhenOneIsThere() throws {
        let name = LoopbackServer.uniqueName()
        XCTAssertFalse(AudioSession.waitForServer(name, limit: 0.4))
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/dev/shm/jack_\(name)_\(getuid())_0"), "a server was started")
        let waited = DispatchSemaphore(value: 0)
        let found = Atomic<Bool>(false)
        Thread.detachNewThread {
            found.store(AudioSession.waitForServer(name, limit: 30), ordering: .relaxed)
            waited.signal()
        }
        _ = try startServer(name: name, period: 256)
        let serverUp = Date()
        XCTAssertEqual(waited.wait(timeout: .now() + 30), .success)
        XCTAssertTrue(found.load(ordering: .relaxed))
        print("waitForServer returned \(String(format: "%.0f", Date().timeIntervalSince(serverUp) * 1000)) ms after the server was up")
    }

    /// A hundred restarts, SIGTERM and SIGKILL in turn, while other processes'
    /// clients come and go every 100 ms (`jack_lsp`): each one sends every
    /// client a notification that libjack handles under the mutex a careless
    /// close leaves locked (jack2 #395). Before the lane waited for the
    /// notification thread, one run in two hung here.
    func testHundredRestartsWithClientChurnLeakNothing() throws {
        var server = try startServer(period: 256)
        let session = AudioSession(clientName: "enduring", serverName: server.name)
        defer { session.close() }
        try session.setCategory(.playback)
        let recorder = EventRecorder(session)
        try session.setActive(true)
        let churn = ClientChurn(server: server.name)
        defer { churn.stop() }
        let restarts = 100
        var threadsBefore = 0, memoryBefore = 0
        var descriptorsBefore = ProcessStats.Descriptors(count: 0, targets: [])
        for round in 1...restarts {
            if round % 2 == 0 { server.kill() } else { server.stop() }
            XCTAssertTrue(waitUntil { self.losses(recorder) == round }, "round \(round): the loss is said")
            server = try startServer(name: server.name, period: 256)
            XCTAssertTrue(waitUntil(timeout: 10) { self.resets(recorder).count == round }, "round \(round): back")
            // Active at the loss, so reactivated by the reset (the automatic policy): else every later round is too.
            if let reset = resets(recorder).last, !reset.reactivated {
                XCTFail("round \(round): the reset did not reactivate the session: \(reset); the last events: "
                        + "\(recorder.events.suffix(12))")
                break
            }
            if round == 10 {
                // Measured once the process has settled into the loop.
                usleep(200_000)
                threadsBefore = ProcessStats.settledThreads()
                descriptorsBefore = ProcessStats.settledDescriptors()
                memoryBefore = ProcessStats.residentBytes
            }
        }
        XCTAssertTrue(waitUntil { session.isActive }, "\(recorder.events.suffix(6))")
        XCTAssertNil(session.libraryWedgedReason)
        XCTAssertEqual(resets(recorder).count, restarts)
        XCTAssertGreaterThan(churn.runs, restarts, "the churn ran during the restarts")
        if churn.hung > 0 { print("client churn: \(churn.hung) jack_lsp run(s) hung in jack_client_close (jack2 #395) and were killed") }
        // A thread or a descriptor in passing (a dead client's close, a
        // reconnect's watch being closed, a churn client being spawned) is not
        // a leak; one per restart would be a hundred. So the threads are
        // waited for (they were 13 against 12 allowed, at one moment and as
        // the fewest over a second, with three of these tests and a busy loop
        // on two cores), and the descriptors are the fewest over a moment.
        let threadsAllowed = threadsBefore + 2
        XCTAssertTrue(waitUntil(timeout: 10) { ProcessStats.threads <= threadsAllowed },
                      "threads: \(ProcessStats.threads), \(threadsBefore) after round 10")
        let descriptorsAfter = ProcessStats.settledDescriptors()
        print("open descriptors after round 10: \(descriptorsBefore.count), after round \(restarts): \(descriptorsAfter.count)")
        XCTAssertLessThanOrEqual(descriptorsAfter.count, descriptorsBefore.count + 2,
                                 "file descriptors opened since round 10: \(descriptorsAfter.targets.subtracting(descriptorsBefore.targets).sorted())")
        XCTAssertLessThan(ProcessStats.residentBytes - memoryBefore, 16 << 20, "resident memory")
    }
}

/// This process's threads, file descriptors, resident memory and CPU time.
enum ProcessStats {
    static var threads: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0 }
    static var openDescriptors: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }

    /// Open descriptors, and what each is (its `/proc/self/fd` link).
    struct Descriptors {
        var count: Int
        var targets: Set<String>
    }

    /// The sample with the fewest of something (`count`) taken every 10 ms over `window` seconds of the monotonic clock.
    private static func fewest<Sample>(over window: Double, _ sample: () -> Sample, count: (Sample) -> Int) -> Sample {
        var fewest = sample()
        let deadline = ContinuousClock.now + .seconds(window)
        while ContinuousClock.now < deadline {
            usleep(10_000)
            let next = sample()
            if count(next) < count(fewest) { fewest = next }
        }
        return fewest
    }

    /// The fewest open descriptors seen over `window` seconds, with their targets at that moment.
    static func settledDescriptors(window: Double = 1) -> Descriptors {
        fewest(over: window, {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            let targets = names.map { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) ?? "?" }
            return Descriptors(count: names.count, targets: Set(targets))
        }, count: \.count)
    }

    /// The fewest threads seen over `window` seconds.
    static func settledThreads(window: Double = 1) -> Int {
        fewest(over: window, { threads }, count: { $0 })
    }

    static var residentBytes: Int {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
    static var cpuSeconds: Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}
