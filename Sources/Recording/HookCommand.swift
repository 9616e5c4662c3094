import Foundation

/// A shell command the user asked to run when something happens (`--on-silence`,
/// `--on-signal`): run with `/bin/sh -c`, the event's facts in its
/// environment, its output on our stderr (never in the JSON on stdout).
/// Started in order on a queue of its own and waited for elsewhere, so a
/// slow or stuck command delays neither capture nor the next command; a
/// failure (not started, non-zero status, killed) is reported.
final class HookCommand: Sendable {
    let command: String
    private let queue = DispatchQueue(label: "jas.record.hooks")
    private let onFailure: @Sendable (_ reason: String) -> Void

    init(command: String, onFailure: @escaping @Sendable (_ reason: String) -> Void) {
        self.command = command
        self.onFailure = onFailure
    }

    /// Runs the command with `environment` added to ours.
    func run(environment: [String: String]) {
        let command = command
        let onFailure = onFailure
        queue.async {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.standardError
            do {
                try process.run()
            } catch {
                onFailure("could not start /bin/sh: \(error.localizedDescription)")
                return
            }
            DispatchQueue.global().async {
                process.waitUntilExit()
                switch (process.terminationReason, process.terminationStatus) {
                case (.exit, 0): break
                case let (.exit, status): onFailure("exited with status \(status)")
                case let (_, signal): onFailure("killed by signal \(signal)")
                }
            }
        }
    }
}
