import Foundation

/// Ctrl-C and SIGTERM for the long-running commands.
enum Signals {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    /// Runs `cleanup` on SIGINT or SIGTERM, then exits with `exitStatus`
    /// (nil: 130 or 143, as a shell reports a signal).
    static func onInterrupt(exitStatus: Int32? = nil, _ cleanup: @escaping @Sendable () -> Void) {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                WedgeWatch.claimEnding()
                cleanup()
                WedgeWatch.leaveIfWedged(command: CommandLine.arguments.dropFirst().first ?? "jas")
                exit(exitStatus ?? 128 + signalNumber)
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Runs `action` on every SIGUSR1 (a start command from another program).
    static func onUser1(_ action: @escaping @Sendable () -> Void) {
        signal(SIGUSR1, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
        source.setEventHandler(handler: action)
        source.resume()
        sources.append(source)
    }
}
