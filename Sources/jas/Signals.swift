import Foundation
import JackRuntime
import Synchronization
import SystemPackage

/// Ctrl-C, SIGTERM, SIGHUP and SIGUSR1 for every command. A handler of our
/// own is installed for each on the first line of `main`, so there is no
/// moment when one is lost or ends the process unfinished. (Not
/// libdispatch's signal sources, nor swift-service-lifecycle's `ServiceGroup`
/// built on them: they listen only once made, and on Linux they read a
/// `signalfd`, which sees a signal only while no thread takes it; an earlier
/// jas that set `SIG_IGN` for them lost a SIGTERM sent in the gap.) The handler
/// only writes the signal's number to a pipe; a thread reads it and runs
/// what it means on a queue of its own (not the global one, whose few
/// threads a command's blocking work can hold: a Ctrl-C must be heard
/// whatever the command does). Not `sigwait` with the signals blocked: the
/// main thread of an async `main` waits in libdispatch's `sigsuspend` with
/// an empty mask, so a blocked signal still lands there.
///
/// Every cleanup registered runs, the last registered first (a command's
/// session closes before the private server it runs on stops), then the
/// process exits; without cleanups, at once.
enum Signals {
    /// What the command asked for, and how far an ending is.
    private struct State {
        var cleanups: [@Sendable () -> Void] = []
        var exitOverride: Int32?
        var user1: (@Sendable () -> Void)?
        var ending = false
        var endingSignal: Int32?
    }

    private static let state = Mutex(State())
    private static let queue = DispatchQueue(label: "jas.signals")
    /// The signals jas takes. SIGHUP (a closed terminal, a dropped SSH
    /// session) ends a command cleanly, as SIGTERM does: a take is finished.
    private static let taken = [SIGINT, SIGTERM, SIGHUP, SIGUSR1]

    /// Installs the handlers and starts the thread that hears them. First
    /// thing in `main`.
    static func takeOver() {
        let ends: (readEnd: FileDescriptor, writeEnd: FileDescriptor)
        do {
            ends = try FileDescriptor.pipe(options: .closeOnExec)
        } catch {
            Output.diagnostic("jas: cannot make a pipe for signals (\(Errno.of(error).sentence)); "
                              + "Ctrl-C ends at once, without finishing")
            return
        }
        // The handler never waits: a full pipe drops the byte (the reader is behind, not gone).
        _ = fcntl(ends.writeEnd.rawValue, F_SETFL, O_NONBLOCK)
        signalPipe.store(ends.writeEnd.rawValue, ordering: .releasing)
        let reader = ends.readEnd
        let listener = Thread {
            var number: UInt8 = 0
            // A read interrupted by a signal is tried again (swift-system's default).
            while (try? withUnsafeMutableBytes(of: &number, { try reader.read(into: $0) })) == 1 {
                let received = Int32(number)
                queue.async { deliver(received) }
            }
        }
        listener.name = "jas.signals"
        listener.start()
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            // Async-signal-safe: one write(2) to a descriptor set before any handler.
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(Signals.signalPipe.load(ordering: .acquiring), &byte, 1)
        }
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        for signalNumber in taken { sigaction(signalNumber, &action, nil) }
    }

    /// The pipe's write end, for the handler (set before any handler runs; an atomic load is async-signal-safe).
    static let signalPipe = Atomic<Int32>(-1)

    private static func deliver(_ signalNumber: Int32) {
        switch signalNumber {
        case SIGUSR1:
            // Without a command that asked for it, SIGUSR1 ends nothing.
            state.withLock { $0.user1 }?()
        default:
            end(signal: signalNumber)
        }
    }

    /// Runs `cleanup` on SIGINT, SIGTERM or SIGHUP, then exits with
    /// `exitStatus` (nil: 128 + the signal's number, as a shell reports it).
    /// Once an ending has begun, the caller waits for the exit instead: what
    /// it would go on to set up (a take's files) would have no cleanup.
    static func onInterrupt(exitStatus: Int32? = nil, _ cleanup: @escaping @Sendable () -> Void) {
        let registered = state.withLock { state -> Bool in
            guard !state.ending else { return false }
            state.cleanups.append(cleanup)
            if let exitStatus { state.exitOverride = exitStatus }
            return true
        }
        if !registered { waitForExit() }
    }

    /// Parks the calling thread until the ending under way exits the process.
    static func waitForExit() -> Never {
        while true { pause() }
    }

    /// Runs `action` on every SIGUSR1 (a start command from another program).
    static func onUser1(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.user1 = action }
    }

    /// Ends the command as a signal would: its cleanups (once, whoever asks
    /// first; a second asker waits for the exit), then `_exit(exitStatus)`.
    static func end(exitStatus: Int32) -> Never {
        end { _ in exitStatus }
    }

    /// `end` for a signal: the status the command asked for, else 128 + its
    /// number, chosen in the same step as the cleanups, so that a cleanup
    /// registered meanwhile brings its status with it.
    private static func end(signal signalNumber: Int32) -> Never {
        end { state in
            state.endingSignal = state.endingSignal ?? signalNumber
            return state.exitOverride ?? 128 + signalNumber
        }
    }

    private static func end(status: (inout State) -> Int32) -> Never {
        let ending = state.withLock { state -> (cleanups: [@Sendable () -> Void], status: Int32)? in
            guard !state.ending else { return nil }
            state.ending = true
            return (state.cleanups.reversed(), status(&state))
        }
        guard let (mine, exitStatus) = ending else { waitForExit() }
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

    /// Why the command is ending, for a log: the signal's name ("SIGTERM"),
    /// or nil when no signal ended it.
    static var endingReason: String? {
        state.withLock { $0.endingSignal }.map { signalNumber in
            switch signalNumber {
            case SIGINT: "SIGINT"
            case SIGTERM: "SIGTERM"
            case SIGHUP: "SIGHUP (terminal closed)"
            default: "signal \(signalNumber)"
            }
        }
    }

    /// Whether the command is ending (its cleanups may be running).
    static var isEnding: Bool { state.withLock { $0.ending } }
}
