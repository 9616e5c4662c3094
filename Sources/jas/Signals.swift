import Foundation
import Synchronization

/// Ctrl-C and SIGTERM for the long-running commands: one handler per
/// signal for the whole process, on a queue of its own (not the global one,
/// whose few threads a command's blocking work can hold: a Ctrl-C must be
/// heard whatever the command does). Every cleanup registered runs, the last
/// registered first (a command's session closes before the private server it
/// runs on stops), then the process exits.
enum Signals {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []
    nonisolated(unsafe) private static var cleanups: [@Sendable () -> Void] = []
    nonisolated(unsafe) private static var exitOverride: Int32?
    nonisolated(unsafe) private static var ending = false
    private static let lock = NSLock()
    private static let queue = DispatchQueue(label: "jas.signals")

    /// Runs `cleanup` on SIGINT or SIGTERM, then exits with `exitStatus`
    /// (nil: 130 or 143, as a shell reports a signal).
    static func onInterrupt(exitStatus: Int32? = nil, _ cleanup: @escaping @Sendable () -> Void) {
        lock.withLock {
            cleanups.append(cleanup)
            if let exitStatus { exitOverride = exitStatus }
        }
        install(SIGINT) { end(exitStatus: lock.withLock { exitOverride } ?? 128 + SIGINT) }
        install(SIGTERM) { end(exitStatus: lock.withLock { exitOverride } ?? 128 + SIGTERM) }
    }

    /// Runs `action` on every SIGUSR1 (a start command from another program).
    static func onUser1(_ action: @escaping @Sendable () -> Void) {
        install(SIGUSR1, action)
    }

    /// One source per signal; a later `install` of the same signal is ignored.
    private static let installed = Mutex<Set<Int32>>([])

    private static func install(_ signalNumber: Int32, _ handler: @escaping @Sendable () -> Void) {
        guard installed.withLock({ $0.insert(signalNumber).inserted }) else { return }
        // The default action goes first, as libdispatch wants it on Linux.
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
        source.setEventHandler(handler: handler)
        source.resume()
        lock.withLock { sources.append(source) }
    }

    /// Ends the command as a signal would: its cleanups (once, whoever asks
    /// first; a second asker waits for the exit), then `_exit(exitStatus)`.
    static func end(exitStatus: Int32) -> Never {
        let mine = lock.withLock { () -> [@Sendable () -> Void]? in
            guard !ending else { return nil }
            ending = true
            return cleanups.reversed()
        }
        guard let mine else {
            while true { pause() }
        }
        WedgeWatch.claimEnding()
        mine.forEach { $0() }
        WedgeWatch.leaveIfWedged(command: CommandLine.arguments.dropFirst().first ?? "jas")
        // _exit, not exit: exit() runs libjack's global destructors, which hang
        // under a client still open (a command without cleanups of its own);
        // everything jas writes is unbuffered, so nothing is lost.
        _exit(exitStatus)
    }

    /// `end`, on the signals' queue: for a thread that a cleanup may wait
    /// for (a meter's reading thread finds the reader of stdout gone, and the
    /// meter's cleanup waits for that thread to finish).
    static func endSoon(exitStatus: Int32) {
        queue.async { end(exitStatus: exitStatus) }
    }

    /// Whether the command is ending (its cleanups may be running).
    static var isEnding: Bool { lock.withLock { ending } }
}
