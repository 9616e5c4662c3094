import Foundation
import Synchronization

/// Other processes' clients coming and going on a server (`jack_lsp`, a
/// pause of 100 ms between runs by default), as qjackctl's or a patchbay's
/// polling does. A `jack_lsp`
/// that has not ended after 5 s is killed and counted: jack_lsp itself can
/// hang for ever in `jack_client_close` when its server goes away while it
/// runs (jack2 #395 in jack2's own tool; seen in a rehearsal's restart test,
/// whose churn then waited for it for ever).
public final class ClientChurn: Sendable {
    private let running = Atomic<Bool>(true)
    private let count = Atomic<Int>(0)
    private let hungCount = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts churning on the server `server`, pausing `pause` seconds between runs.
    public init(server: String, pause: Double = 0.1) {
        let lsp = LoopbackServer.findExecutable("jack_lsp") ?? "/usr/bin/jack_lsp"
        Thread.detachNewThread { [self] in
            while running.load(ordering: .relaxed) {
                // Spawned and reaped by its PID here, not through Foundation's
                // Process, which once never saw a jack_lsp end (a zombie the
                // churn then waited on for ever, in a full run's restart test).
                if let pid = try? LoopbackServer.spawn([lsp, "-s", server], logPath: "/dev/null") {
                    var status: Int32 = 0
                    let deadline = ContinuousClock.now + .seconds(5)
                    var ended = false
                    while !ended && ContinuousClock.now < deadline {
                        ended = waitpid(pid, &status, WNOHANG) == pid
                        if !ended { usleep(10_000) }
                    }
                    if !ended {
                        kill(pid, SIGKILL)
                        hungCount.add(1, ordering: .relaxed)
                        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                    }
                }
                count.add(1, ordering: .relaxed)
                usleep(UInt32(pause * 1_000_000))
            }
            finished.signal()
        }
    }

    /// How many clients came and went so far.
    public var runs: Int { count.load(ordering: .relaxed) }

    /// How many `jack_lsp` runs hung and were killed.
    public var hung: Int { hungCount.load(ordering: .relaxed) }

    /// Stops churning and waits for the last client to end.
    public func stop() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        finished.wait()
    }
}
