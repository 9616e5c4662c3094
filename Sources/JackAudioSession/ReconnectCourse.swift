import JackKit
import JackRuntime

/// What the reconnect thread does at each attempt for one loss, decided
/// apart from JACK and the clock: stop, pause (saying a damaged metadata
/// store once), or open a client. The thread looks at the world for it
/// (the session's reconnect generation, the time since the loss on the
/// monotonic clock, the store's files, the server's socket and process)
/// and carries the step out; the pace of the pauses is `ReconnectBackoff`'s.
struct ReconnectCourse {
    /// The loss this course answers: it ends when the session's reconnect
    /// generation moves on (answered, closed, lost again, libjack wedged).
    let generation: Int
    /// Whether a damaged store was said for this loss (said once: the
    /// server cannot come back until the store is repaired).
    private var storeDamageSaid = false

    init(generation: Int) {
        self.generation = generation
    }

    enum Step: Equatable {
        /// The loss is over, or the limit passed: no more attempts.
        case stop
        /// Not now: pause, then look again; `say`: a damaged store to post first.
        case pause(say: JackError?)
        /// Open a client on the server.
        case open
        /// No client of this process can reach a server again (its server
        /// registry was replaced): say `reason` as libjack wedged, and stop.
        case wedged(reason: String)
    }

    /// The next step. `generation`: the session's reconnect generation now
    /// (nil: the session is gone). `sinceLoss` and `limit`: the time since
    /// the loss and the session's reconnect limit, seconds (nil: none).
    /// `storeDamage`: looks at the metadata store's files, without libjack
    /// (jackd dies of a damaged store too, so it is why the server cannot
    /// come back). `serverAway`: whether no request socket or no jackd
    /// serves the name (libjack opens the store with every client, and
    /// Berkeley DB, meeting it half made while jackd made it, waited 3 s).
    /// `registryReplaced`: why this process's server registry is no longer
    /// the one on disk (nil: it is), looked at first: then no open can
    /// succeed, whether the server is back or not.
    /// The looks are asked only when the step depends on them, in that order.
    mutating func next(generation current: Int?, sinceLoss: Duration, limit: Double?,
                       registryReplaced: () -> String? = { nil },
                       storeDamage: () -> JackError?, serverAway: () -> Bool) -> Step {
        guard let current, current == generation else { return .stop }
        if let limit, sinceLoss.inSeconds > limit { return .stop }
        if let reason = registryReplaced() { return .wedged(reason: reason) }
        if let damage = storeDamage() { return .pause(say: say(damage)) }
        if serverAway() { return .pause(say: nil) }
        return .open
    }

    /// An open failed with `cause`: a damaged store it names is said, once
    /// for this loss as well.
    mutating func openFailed(_ cause: JackError?) -> JackError? {
        switch cause {
        case let cause? where cause.isMetadataStoreProblem: return say(cause)
        default: return nil
        }
    }

    private mutating func say(_ damage: JackError) -> JackError? {
        guard !storeDamageSaid else { return nil }
        storeDamageSaid = true
        return damage
    }
}
