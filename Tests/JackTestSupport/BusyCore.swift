import Foundation

/// A process that keeps one core busy (a shell loop) until stopped, so a
/// test can show that what it checks holds on a loaded machine too.
/// Stopped by its PID, also when the test failed (`deinit`).
public final class BusyCore {
    private let process = Process()

    public init() throws {
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "while :; do :; done"]
        try process.run()
    }

    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}
