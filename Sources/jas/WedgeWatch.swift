import Foundation
import JackAudioSession
import JackKit
import JackRuntime
import Synchronization

/// What the long-running commands do when libjack gets stuck in the process
/// (jack2 #395: a client that cannot be closed without hanging): no session
/// in it can reach a server again, so the command finalises what it holds
/// (the recording's header, the meter's summary), says so in one line on
/// stderr and exits with `exitStatus`, for a supervisor (systemd
/// `Restart=on-failure`) to start it afresh.
///
/// Whoever ends the command first finalises: the watch, Ctrl-C, or the
/// command reaching its end; the others then leave it to them.
enum WedgeWatch {
    /// EX_TEMPFAIL: a temporary failure that a restart clears.
    static let exitStatus: Int32 = 75

    private static let ending = Atomic<Bool>(false)
    /// Never signalled: a thread that lost the race to end waits on it for
    /// the winner to exit the process.
    private static let parked = DispatchSemaphore(value: 0)

    /// Checks four times a second; on a wedge runs `finalise`, then exits.
    static func start(command: String, finalise: @escaping @Sendable () -> Void = {}) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + 0.25, repeating: 0.25)
        // The handler holds the timer: it lives as long as the command.
        timer.setEventHandler {
            _ = timer
            guard ClientLifecycle.shared.wedgedReason != nil, claimEnding() else { return }
            finalise()
            leaveIfWedged(command: command)
        }
        timer.resume()
    }

    /// Called where the command ends by itself or on a signal, before it
    /// finalises: true when it is the first to end; otherwise another ending
    /// is finalising and will exit, and this thread waits for that.
    @discardableResult
    static func claimEnding() -> Bool {
        guard ending.exchange(true, ordering: .acquiringAndReleasing) else { return true }
        parked.wait()
        fatalError("WedgeWatch.parked is never signalled")
    }

    /// After finalising: when libjack is wedged, says so and leaves;
    /// otherwise returns. A process whose server registry was replaced
    /// starts itself again with the same arguments (a new process attaches
    /// the new registry: a take goes on from its manifest, a monitor or a
    /// meter from the server's state); any other wedge, or an exec that
    /// fails, exits with `exitStatus` (exit() would run libjack's
    /// destructors, which wait for the stuck client).
    static func leaveIfWedged(command: String) {
        guard let reason = ClientLifecycle.shared.wedgedReason else { return }
        if ClientLifecycle.shared.registryReplacedReason != nil {
            Output.diagnostic("jas \(command): \(reason); starting again in a new process with the same arguments")
            let failure = ProcessRestart.reexecute(reason: reason)
            Output.diagnostic("jas \(command): could not start again (exec of /proc/self/exe: \(failure))")
        }
        Output.diagnostic("jas \(command): \(reason); exiting with status \(exitStatus) so that a supervisor restarts it")
        _exit(exitStatus)
    }

    /// At the start of a command that runs on a server: when this process
    /// is one that `leaveIfWedged` started again, says why and waits for
    /// the server (the old process may have left before it came back).
    static func awaitServerAfterRestart(_ server: ServerOption, command: String) {
        guard ProcessRestart.previousReason != nil else { return }
        Output.diagnostic("jas \(command): started again in a new process (the reason is above); waiting for JACK "
                          + "server '\(server.resolvedName)'")
        AudioSession.waitForServer(server.resolvedName, probeName: "jas-\(command)-probe")
    }
}
