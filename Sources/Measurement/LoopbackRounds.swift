import JackAudioSession
import JackRuntime
import Synchronization

/// A `LoopbackCheck` run round after round (`jas selftest --loop`), through
/// whatever the server does: a round that cannot start because the server
/// is gone waits for it (never starting one) at the reconnect's pace, then
/// the rounds go on; a server lost in the middle of a round is the
/// session's own media-services reset, and the round is run again.
public final class LoopbackRounds: Sendable {
    /// What the rounds tell as they go.
    public enum Event: Sendable {
        /// Round `number` ran on a present server.
        case round(number: Int, result: LoopbackCheck.Result)
        /// A round could not run: the server is not there; waiting for it.
        case serverAway(AudioSessionError)
        /// The server is back after `downtimeSeconds` (monotonic); the rounds go on.
        case serverBack(downtimeSeconds: Double)
    }

    /// The check each round runs.
    public let check: LoopbackCheck
    private let counts = Mutex((rounds: 0, failed: 0))

    /// Rounds of `check`; nothing runs until `run(tell:)`.
    public init(check: LoopbackCheck) {
        self.check = check
    }

    /// How many rounds failed so far (readable from any thread: a Ctrl-C handler decides the exit by it).
    public var failures: Int { counts.withLock { $0.failed } }

    /// Runs rounds until the process ends, telling each round and each
    /// absence of the server to `tell`. Throws what is not the server's
    /// absence (a port that is not there, a refused activation).
    public func run(tell: (Event) -> Void) throws -> Never {
        while true {
            do {
                let result = try check.run()
                let number = counts.withLock { counts in
                    counts.rounds += 1
                    if !result.passed { counts.failed += 1 }
                    return counts.rounds
                }
                tell(.round(number: number, result: result))
            } catch let error as AudioSessionError where error.sessionCode == .mediaServicesFailed {
                let lostAt = ContinuousClock.now
                tell(.serverAway(error))
                AudioSession.waitForServer(check.serverName, probeName: "\(check.clientName)-probe")
                tell(.serverBack(downtimeSeconds: (ContinuousClock.now - lostAt).inSeconds))
            }
        }
    }
}
