import JackAudioSession
import Foundation
import LoopbackHarness
import XCTest

/// Base class for tests that run against a real jackd: starts private servers
/// with unique names, stops them by PID in teardown (also when the test
/// failed), and prints the server's log when the test did not pass.
open class JackTestCase: XCTestCase {
    private var servers: [LoopbackServer] = []

    /// Starts a private server for this test; see `LoopbackServer.init`.
    public func startServer(name: String = LoopbackServer.uniqueName(), loopbackChannels: Int = 2,
                            sampleRate: Int = 48000, period: Int = 64, realtime: Bool = false,
                            serverArguments: [String] = [], backendArguments: [String] = [],
                            environment: [String: String] = [:],
                            file: StaticString = #filePath, line: UInt = #line) throws -> LoopbackServer {
        do {
            let server = try LoopbackServer(name: name, loopbackChannels: loopbackChannels, sampleRate: sampleRate,
                                            period: period, realtime: realtime, serverArguments: serverArguments,
                                            backendArguments: backendArguments, environment: environment)
            servers.append(server)
            return server
        } catch {
            XCTFail("could not start jackd: \(error)", file: file, line: line)
            throw error
        }
    }

    open override func tearDown() {
        let failed = (testRun?.totalFailureCount ?? 0) > 0
        for server in servers {
            server.stop()
            if failed {
                print("---- jackd '\(server.name)' log (\(server.logPath)) ----\n\(server.log)\n---- end of log ----")
            }
        }
        // Their session registry folders, once empty (a file left behind is evidence).
        for server in servers { rmdir(SessionRegistry(serverName: server.name).directory) }
        servers.removeAll()
        super.tearDown()
    }

    /// Asserts that `read` gives `expected`, waiting for it up to `timeout`
    /// seconds. For a port's connections after a change: libjack's readers
    /// see a connection made or broken once the server has run a cycle since
    /// (the change becomes the current graph in the server's cycle), and
    /// they wait for that only 1.1 periods (docs/JACK-FINDINGS.md), less than
    /// a loaded machine may take (seen beside a busy core: a port read with
    /// no connection between its old one's removal and its new one's).
    public func assertEventuallyEqual<Value: Equatable>(_ read: @autoclosure () -> Value, _ expected: Value, timeout: Double = 5,
                                                        _ message: @autoclosure () -> String = "",
                                                        file: StaticString = #filePath, line: UInt = #line) {
        var last = read()
        _ = waitUntil(timeout: timeout) {
            last = read()
            return last == expected
        }
        XCTAssertEqual(last, expected, message(), file: file, line: line)
    }

    /// Polls `condition` every 10 ms until it holds or `timeout` seconds pass
    /// (on the monotonic clock: a test that steps the wall clock does not move it).
    public func waitUntil(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// Every thread's stack of process `pid`, as gdb prints them (function
    /// names only, one line a frame): the evidence to print when a process
    /// is slower than it should be, taken while it still is.
    public func stacks(of pid: pid_t) -> String {
        guard let result = try? run(["gdb", "-p", String(pid), "-batch", "-ex", "thread apply all bt 20"]) else {
            return "(gdb could not be started)"
        }
        let frames = result.output.split(separator: "\n").filter { $0.hasPrefix("Thread") || $0.hasPrefix("#") }
        return frames.map { line in
            // "#3  0x00007f… in jack_client_open (…) at …": the frame number and the function are enough.
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            guard line.hasPrefix("#"), words.count > 1 else { return String(line.prefix(60)) }
            let function = words.firstIndex(of: "in").map { $0 + 1 < words.count ? words[$0 + 1] : "?" } ?? words[1]
            return "\(words[0]) \(function)"
        }.joined(separator: " | ")
    }

    /// The jas binary built next to this test bundle.
    public var jas: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jas").path
    }

    /// Runs a command-line tool to completion and returns its exit status and
    /// output. One that has not ended after `timeout` seconds is a hang: the
    /// test fails naming the command, with the process's stacks (gdb), and the
    /// process is killed by its PID (status -1).
    /// Marks every descriptor this process has open close-on-exec, so that a
    /// tool started next inherits none but its standard three (a pipe a child
    /// inherits stays open while the child runs, and whoever reads it waits
    /// for an end that does not come). (Closing them in the child instead also closes
    /// Foundation's own descriptor that tells it the child ended: its monitor
    /// thread then waits on the live child for ever.)
    public static func keepDescriptorsFromChildren() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let descriptor = Int32(name), descriptor > 2 else { continue }
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 && flags & FD_CLOEXEC == 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    public func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 300,
                    file: StaticString = #filePath, line: UInt = #line) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        Self.keepDescriptorsFromChildren()
        try process.run()
        // The tool has its copy of the write end; ours would only keep the pipe open.
        try? pipe.fileHandleForWriting.close()
        // Read while waiting, so a full pipe cannot stop the tool; EOF comes when it (and any child holding the pipe) ends.
        let output = OutputCollector()
        // The read end is closed once read: a test process runs thousands of
        // tools, and would run out of descriptors.
        let reader = Thread {
            output.append(pipe.fileHandleForReading.readDataToEndOfFile())
            try? pipe.fileHandleForReading.close()
        }
        reader.start()
        guard ended.wait(timeout: .now() + timeout) == .success else {
            let evidence = stacks(of: process.processIdentifier)
            kill(process.processIdentifier, SIGKILL)
            // Not waitUntilExit: where Foundation missed the end (a zombie
            // it never reaped) that would wait for ever. Reaped by PID, bounded.
            var status: Int32 = 0
            for _ in 0..<500 where process.isRunning {
                if waitpid(process.processIdentifier, &status, WNOHANG) == process.processIdentifier { break }
                usleep(10_000)
            }
            XCTFail("\(arguments.joined(separator: " ")) did not end within \(Int(timeout)) s; its stacks: \(evidence)",
                    file: file, line: line)
            return (-1, output.text(waitingUpTo: 2))
        }
        return (process.terminationStatus, output.text(waitingUpTo: 10))
    }
}

/// What a tool printed, collected on a reader thread.
private final class OutputCollector: @unchecked Sendable { // `data` is written once, under `done`'s signal
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    func append(_ read: Data) {
        data = read
        done.signal()
    }

    /// The output once the pipe closed, or what there is after `seconds`
    /// (a child the tool left behind may still hold the pipe open).
    func text(waitingUpTo seconds: Double) -> String {
        guard done.wait(timeout: .now() + seconds) == .success else { return "(the output pipe is still held open)" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A fresh folder for a test's files, removed by the caller.
public func temporaryFolder() -> String {
    let path = NSTemporaryDirectory() + "jas-test-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
