import Foundation
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
        while true { sleep(60) }
    }

    /// After finalising: when libjack is wedged, says so and exits with
    /// `exitStatus` (exit() would run libjack's destructors, which wait for
    /// the stuck client); otherwise returns.
    static func leaveIfWedged(command: String) {
        guard let reason = ClientLifecycle.shared.wedgedReason else { return }
        Output.diagnostic("jas \(command): \(reason); exiting with status \(exitStatus) so that a supervisor restarts it")
        _exit(exitStatus)
    }
}
