import Foundation

/// Ctrl-C and SIGTERM for the long-running commands.
enum Signals {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    /// Runs `cleanup` on SIGINT or SIGTERM, then exits (130 or 143).
    static func onInterrupt(_ cleanup: @escaping @Sendable () -> Void) {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                cleanup()
                exit(128 + signalNumber)
            }
            source.resume()
            sources.append(source)
        }
    }
}
