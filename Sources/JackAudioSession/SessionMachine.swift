import Foundation
import JackRuntime

/// The session's lifecycle, in one place: which phase it is in, and what
/// each thing that can happen to it does. Pure: no JACK, no queue, no clock
/// (times come in with the inputs). `SessionCore`, on the session's queue,
/// is its driver: it feeds the machine every input (an app's call, a
/// shutdown from JACK, the registry's word, a reconnect's result), carries
/// out the effects the machine returns (post an event, reconnect), and does
/// the JACK work in between (open a client, register ports, connect).
///
/// ```
///            open / activate                 activation done
///  closed ──────────────────▶ activating ─────────────────────▶ active
///    ▲                            │ failed                         │ deactivate
///    │ close (from any phase)     ▼                                ▼
///    │                          idle ◀──── interruption ended ── interrupted(by)
///    │                                                             ▲
///    │                            active ── another session ───────┘
///    │
///    │  server gone (idle, active, interrupted, activating)
///    │     ──▶ lost(loss) ── reconnected ──▶ idle / interrupted / activating (reset)
///    │                    ── app reached it first ──▶ activating / idle (the reset said there)
///    │                    ── libjack stuck ──▶ wedged
/// ```
///
/// Every loss gets a new reconnect generation, and the generation moves on
/// when the loss is answered, the session closes or libjack is wedged: the
/// reconnect thread, which reads only the generation, stops then, and a
/// client it opened for an older one is refused. Each loss is answered by
/// exactly one `mediaServicesWereReset`, or by nothing when the session
/// closes or libjack is wedged first.
struct SessionMachine: Sendable {
    /// What a loss left behind for the reset to compare with.
    struct Loss: Sendable, Equatable {
        /// The reconnect generation the loss started; a close or a later loss ends it.
        let generation: Int
        let wasActive: Bool
        /// The session that had interrupted this one, when the server went.
        let interrupter: PublishedSession?
        /// When, on the monotonic clock (a wall-clock step does not move it).
        let lostAt: ContinuousClock.Instant
        /// Sample rate (Hz) and period (frames) when last seen.
        let sampleRate: Double
        let period: Int
    }

    /// An activation under way: what it answers, and whether others were told of it.
    struct Attempt: Sendable, Equatable {
        /// Numbers attempts, so the word of an older one is told from the current one's.
        let number: Int
        /// The reactivation of a reset (automatic policy): missing ports are
        /// connected when they come, and the session keeps its place in the
        /// activation order.
        let reset: Loss?
        /// The app activated while the session was lost: reaching the server ends the loss.
        let returning: Loss?
        /// Where a failure leaves the session when no client was reached.
        let fallback: Fallback
        /// Published as active before its audio flows (so those it interrupts fall silent as it starts).
        var announced = false
        /// The attempt opened the session's client (it had none before).
        var clientReached = false

        /// Where an activation that reached no client goes back to.
        enum Fallback: Sendable, Equatable {
            case closed, lost(Loss), wedged(reason: String)
            /// The client was open already: inactive, or still interrupted when the attempt was not announced.
            case idle, interrupted(by: PublishedSession)
        }
    }

    enum Phase: Sendable, Equatable {
        /// No client.
        case closed
        /// The client is open, the session inactive (never active, deactivated, or back from a loss).
        case idle
        case activating(Attempt)
        case active
        /// Inactive because another session took the audio; waits for it to end.
        case interrupted(by: PublishedSession)
        /// The server went away; a reconnect of the loss's generation is under way.
        case lost(Loss)
        /// libjack is stuck in this process: no session in it can reach a server again.
        case wedged(reason: String)
    }

    /// What the driver does for the machine, in order.
    enum Effect: Sendable, Equatable {
        case post(AudioSessionEvent)
        /// The route change (categoryChange) from nothing to the route taken, after a first activation.
        case postFirstRoute
        /// Let go of the dead client and reconnect for `loss`, off the queue.
        case reconnect(Loss)
        /// The attempt had published the session as active: publish it as inactive again.
        case withdrawAnnouncement
        /// Read the devices again: a refresh put off while an activation waited for JACK.
        case refreshRoute
        /// Another session took the audio: silence this one at once and stop
        /// its client (before the interruption is posted).
        case silenceForInterruption
    }

    private(set) var phase = Phase.closed
    /// A route refresh asked for while an activation waited for JACK.
    private(set) var routeRefreshDeferred = false
    /// Another session lowers this one's output now (only while active).
    var ducked: Bool { isActive && duckedWhenArbitrated }
    private var duckedWhenArbitrated = false
    /// The secondary-audio hint as last said (on only while active).
    private(set) var secondaryHint = false
    /// Whether the session watches the other sessions (the registry, and
    /// the arbitration's timer): from the first client it opens until it
    /// closes, through losses and a wedged libjack.
    private(set) var watchesOthers = false
    /// What the session tells the others of its sound: its order, heard, ducking, how it last deactivated.
    private(set) var audibility = Audibility()
    /// Whether the session was ever active (the first activation posts the route it took).
    private(set) var hasBeenActive = false
    /// Bumped by each loss and by close: a reconnect of an older generation stops.
    private(set) var generation = 0
    private var attempts = 0

    // MARK: What the phase means

    var isActive: Bool { phase == .active }

    /// Whether the session is published as active: active, or an announced activation.
    var publishesActive: Bool {
        if case let .activating(attempt) = phase { return attempt.announced }
        return isActive
    }

    /// The session that interrupted this one, while the interruption lasts (also while the server is away).
    var interrupter: PublishedSession? {
        switch phase {
        case let .interrupted(by: other): other
        case let .lost(loss): loss.interrupter
        default: nil
        }
    }

    /// The loss a reconnect answers, while it lasts.
    var pendingLoss: Loss? {
        if case let .lost(loss) = phase { return loss }
        return nil
    }

    var wedgedReason: String? {
        if case let .wedged(reason) = phase { return reason }
        return nil
    }

    /// The activation under way, if any.
    var attempt: Attempt? {
        if case let .activating(attempt) = phase { return attempt }
        return nil
    }

    /// Whether the session holds a client (the driver's client matches: open, not lost or closed).
    private var hasClient: Bool {
        switch phase {
        case .idle, .active, .interrupted: true
        case let .activating(attempt):
            switch attempt.fallback {
            case .idle, .interrupted: true
            case .closed, .lost, .wedged: attempt.reset != nil || attempt.clientReached
            }
        case .closed, .lost, .wedged: false
        }
    }

    // MARK: The app

    /// The app asks to activate. nil: it is active already (nothing to do);
    /// else the attempt the driver carries out, ending in
    /// `activationSucceeded` or `activationFailed`.
    mutating func activationRequested() -> Attempt? {
        let fallback: Attempt.Fallback
        var returning: Loss?
        switch phase {
        case .active: return nil
        case .activating: return nil
        case .closed: fallback = .closed
        case let .lost(loss):
            fallback = .lost(loss)
            returning = loss
        case let .wedged(reason): fallback = .wedged(reason: reason)
        case .idle: fallback = .idle
        case let .interrupted(by: other): fallback = .interrupted(by: other)
        }
        attempts += 1
        let attempt = Attempt(number: attempts, reset: nil, returning: returning, fallback: fallback)
        phase = .activating(attempt)
        return attempt
    }

    /// The attempt published the session as active, at `order` (JACK
    /// microseconds at the request): heard from now, as its audio starts.
    mutating func announced(_ number: Int, order: UInt64, at now: ContinuousClock.Instant) {
        guard case var .activating(attempt) = phase, attempt.number == number else { return }
        attempt.announced = true
        phase = .activating(attempt)
        audibility.announced(order: order, at: now)
    }

    /// The attempt's client runs, its ports are connected. `server`: the
    /// client's rate and period now, for a reset to report. Nothing when the
    /// attempt is not the current one (a loss or a close overtook it).
    /// `order`: the activation's place in the order (nil: a reset keeps its
    /// place; `clockMicroseconds`, JACK's time now, stands for one never taken).
    mutating func activationSucceeded(_ number: Int, server: ServerFormat, order: UInt64? = nil, clockMicroseconds: UInt64 = 0,
                                      at now: ContinuousClock.Instant) -> [Effect]? {
        guard case let .activating(attempt) = phase, attempt.number == number else { return nil }
        let first = !hasBeenActive
        phase = .active
        audibility.activated(order: order, clockMicroseconds: clockMicroseconds, at: now)
        hasBeenActive = true
        var effects: [Effect] = []
        if first && attempt.reset == nil { effects.append(.postFirstRoute) }
        if let loss = attempt.reset ?? attempt.returning {
            // Answered: the reconnect of its generation stops.
            generation += 1
            effects.append(.post(.mediaServicesWereReset(loss.reset(to: server, reactivated: true, at: now))))
        }
        if routeRefreshDeferred {
            routeRefreshDeferred = false
            effects.append(.refreshRoute)
        }
        return effects
    }

    /// Why an attempt is no longer the session's, once its wait for JACK is over.
    enum Overtaken: Sendable, Equatable {
        /// The app closed the session meanwhile.
        case closed
        /// The server went away meanwhile (or libjack got stuck).
        case serverGone
    }

    /// Whether attempt `number` was overtaken while it waited for JACK
    /// (nil: it is still the session's; `activationSucceeded` ends it).
    func overtaken(_ number: Int) -> Overtaken? {
        guard attempt?.number != number else { return nil }
        return phase == .closed ? .closed : .serverGone
    }

    /// The devices may have changed: whether to read them now. While an
    /// activation waits for JACK its route is planned already, so the
    /// refresh is put off until the activation succeeds (`.refreshRoute`).
    mutating func routeRefreshRequested() -> Bool {
        guard attempt == nil else {
            routeRefreshDeferred = true
            return false
        }
        return true
    }

    /// The attempt failed. `clientOpen`: the driver holds an open client
    /// now (reached before the failure). A reset's reactivation that failed
    /// (the server went again mid-rebuild) goes back to waiting for the
    /// server; an app's activation that reached a returned server ends the
    /// loss there (said as a reset, not reactivated).
    mutating func activationFailed(_ number: Int, clientOpen: Bool, server: ServerFormat?, at now: ContinuousClock.Instant) -> [Effect] {
        guard case let .activating(attempt) = phase, attempt.number == number else { return [] }
        var effects: [Effect] = []
        if attempt.announced {
            audibility.silenced()
            effects.append(.withdrawAnnouncement)
        }
        if let loss = attempt.reset {
            phase = .lost(loss)
            return effects
        }
        if case let .interrupted(by: other) = attempt.fallback, !attempt.announced {
            // Refused before it was announced (a call is on): still waiting for the interruption's end.
            phase = .interrupted(by: other)
            return effects
        }
        if clientOpen {
            phase = .idle
            if let loss = attempt.returning, let server {
                generation += 1
                effects.append(.post(.mediaServicesWereReset(loss.reset(to: server, reactivated: false, at: now))))
            }
            return effects
        }
        switch attempt.fallback {
        case .closed: phase = .closed
        case let .lost(loss): phase = .lost(loss)
        case let .wedged(reason): phase = .wedged(reason: reason)
        case .idle, .interrupted: phase = .idle
        }
        return effects
    }

    /// What a deactivation comes to.
    enum Deactivation: Equatable {
        /// Not active: nothing to do.
        case nothing
        /// Stop the client, then say `deactivated()`.
        case deactivate
        /// Refused with `isBusy`: an audio object attached to the session still runs.
        case refuseBusy
    }

    /// A deactivation asked for by the app: refused while an attached audio
    /// object runs, as AVAudioSession refuses it.
    func deactivationRequested(audioObjectRunning: Bool) -> Deactivation {
        guard isActive else { return .nothing }
        return audioObjectRunning ? .refuseBusy : .deactivate
    }

    /// What setting the category comes to.
    enum CategoryChange: Sendable, Equatable {
        /// Not active: the category applies at the next activation.
        case applyAtActivation
        /// Active: the session stops its client and carries out the attempt,
        /// which registers the new category's ports and takes its route.
        case rebuild(Attempt)
    }

    /// The app set the category (its rules resolved): while active, the
    /// session deactivates and activates again at once, whatever audio
    /// object runs.
    mutating func categoryChanged() -> CategoryChange {
        guard isActive else { return .applyAtActivation }
        phase = .idle
        guard let attempt = activationRequested() else { return .applyAtActivation }
        return .rebuild(attempt)
    }

    mutating func deactivated() {
        guard isActive else { return }
        phase = .idle
    }

    /// The app opened the session without activating it: the driver opened
    /// a new client (`server`: its rate and period). A session that was lost
    /// has its server back: the reset is said here.
    mutating func clientOpened(server: ServerFormat, at now: ContinuousClock.Instant) -> [Effect] {
        watchesOthers = true
        switch phase {
        case let .lost(loss):
            phase = loss.interrupter.map { .interrupted(by: $0) } ?? .idle
            generation += 1
            return [.post(.mediaServicesWereReset(loss.reset(to: server, reactivated: false, at: now)))]
        case .closed, .wedged:
            phase = .idle
            return []
        case var .activating(attempt):
            // Opened for the attempt: a loss from now on is one (the activation waits off the queue).
            attempt.clientReached = true
            phase = .activating(attempt)
            return []
        default:
            return []
        }
    }

    /// Whether `open()` needs a new client (else the open one is reused, or the session is active).
    var openNeedsClient: Bool { !hasClient }

    /// Closes: any phase ends, and any reconnect stops.
    mutating func close() {
        phase = .closed
        watchesOthers = false
        hasBeenActive = false
        generation += 1
    }

    // MARK: The server

    /// The server went away or dropped the session's client. `server`: the
    /// rate and period last seen. nil when there was no client to lose.
    mutating func serverLost(reason: String, lastSeen server: ServerFormat, at now: ContinuousClock.Instant) -> [Effect]? {
        let wasActive: Bool
        var interrupter: PublishedSession?
        switch phase {
        case .active: wasActive = true
        case .idle: wasActive = false
        case let .interrupted(by: other):
            wasActive = false
            interrupter = other
        case let .activating(attempt) where hasClient:
            // A reset's reactivation was answering an active session: it stays one to reactivate.
            wasActive = attempt.reset != nil
        case .activating, .closed, .lost, .wedged: return nil
        }
        generation += 1
        let loss = Loss(generation: generation, wasActive: wasActive, interrupter: interrupter, lostAt: now,
                        sampleRate: server.sampleRate, period: server.period)
        phase = .lost(loss)
        return [.post(.mediaServicesWereLost(reason: reason)), .reconnect(loss)]
    }

    /// Whether the reconnect for `loss` should open a client now: the session
    /// is still lost to it (not answered by the app's reaching the server,
    /// lost again or closed since).
    func awaitsReconnect(for loss: Loss) -> Bool { pendingLoss?.generation == loss.generation }

    /// What to do with a client the reconnect opened for `loss`.
    enum Reconnected: Sendable, Equatable {
        /// Stale (closed, lost again, or the app got there first): close it.
        case refuse
        /// Install it and reactivate: the attempt ends in `activationSucceeded` / `activationFailed`.
        case reactivate(Attempt)
        /// Install it and stay inactive; then carry out the effects.
        case install([Effect])
    }

    /// The reconnect thread opened a client on the returned server for
    /// `loss`. `automatic`: the reset policy at that moment.
    mutating func reconnected(for loss: Loss, server: ServerFormat, automatic: Bool, at now: ContinuousClock.Instant) -> Reconnected {
        guard case let .lost(current) = phase, current.generation == loss.generation else { return .refuse }
        if current.wasActive && automatic {
            attempts += 1
            let attempt = Attempt(number: attempts, reset: current, returning: nil, fallback: .lost(current))
            phase = .activating(attempt)
            return .reactivate(attempt)
        }
        phase = current.interrupter.map { .interrupted(by: $0) } ?? .idle
        generation += 1
        return .install([.post(.mediaServicesWereReset(current.reset(to: server, reactivated: false, at: now)))])
    }

    /// libjack is stuck in this process (a close that never ends): said
    /// once, and nothing reconnects any more.
    mutating func libraryWedged(_ why: String) -> [Effect] {
        guard case .lost = phase else { return [] }
        phase = .wedged(reason: why)
        generation += 1
        return [.post(.mediaServicesWereLost(reason: "libjack is wedged: " + why))]
    }

    // MARK: The other sessions

    /// The app's deactivation is done (also when it found nothing active):
    /// silent, and the others read whether it asked them to resume.
    mutating func appDeactivated(notifyingOthers: Bool, at now: ContinuousClock.Instant) {
        audibility.deactivated(notifyingOthers: notifyingOthers, at: now)
    }

    /// A look at the output (the arbitration's timer, or an arbitration):
    /// whether it is heard and ducks the others, which holds only while
    /// active; an activation under way was announced as sounding and stays
    /// so until it ends. `ducksOthers`: the duckOthers option;
    /// `releaseHold`: seconds of silence that end the ducking (nil: none).
    /// Whether either changed.
    @discardableResult
    mutating func outputLooked(at output: Audibility.Output, ducksOthers: Bool, releaseHold: Double?,
                               at now: ContinuousClock.Instant) -> Bool {
        guard attempt == nil else { return false }
        return audibility.looked(at: isActive ? output : .none, ducksOthers: ducksOthers, releaseHold: releaseHold, at: now)
    }

    /// What the arbitration read in the registry: `interrupter`, another
    /// session that takes the audio from this one (`Arbitration.interrupter`),
    /// and every session published now. Returns what to do: for an
    /// interruption that begins, silence the session first, then post it;
    /// for one that ends, post it.
    mutating func othersPublished(interrupter: PublishedSession?, all: [PublishedSession]) -> [Effect] {
        switch phase {
        case .active:
            guard let interrupter else { return [] }
            phase = .interrupted(by: interrupter)
            audibility.silenced()
            return [.silenceForInterruption, .post(.interruption(type: .began, options: [],
                                                                 reason: interrupter.state.priority == .call ? .callStarted : .default))]
        case let .interrupted(by: waitingOn):
            let now = all.first { $0.uuid == waitingOn.uuid }
            // Gone (closed or crashed: resume), deactivated (resume if it
            // said so), or active again since (a new activation: its
            // interruption of this session has ended; resume only if told).
            guard now == nil || now?.state.active == false || now?.state.order != waitingOn.state.order else {
                return []
            }
            let resume = now == nil || now?.state.resumeOthers == true
            phase = .idle
            return [.post(.interruption(type: .ended, options: resume ? .shouldResume : [], reason: .default))]
        default:
            return []
        }
    }

    /// What the arbitration found for this session once an interruption
    /// was settled (`othersPublished`): `duckGain`, the gain the others'
    /// ducking leaves its output, and `hintWanted`, whether the others'
    /// audio asks secondary audio to fall silent. Neither holds while
    /// inactive: "this notification is sent only to registered listeners
    /// who are currently in the foreground and have an active audio
    /// session", so an inactive session's hint goes off in silence and
    /// comes on, said, when it activates. Returns the hint's post.
    mutating func arbitrated(duckGain: Float, hintWanted: Bool) -> [Effect] {
        duckedWhenArbitrated = duckGain < 1
        let hint = isActive && hintWanted
        defer { secondaryHint = hint }
        return hint != secondaryHint && isActive ? [.post(.silenceSecondaryAudioHint(begin: hint))] : []
    }
}

/// A server's sample rate (Hz) and period (frames).
struct ServerFormat: Sendable, Equatable {
    let sampleRate: Double
    let period: Int
}

extension SessionMachine.Loss {
    /// The reset that answers this loss on a server running `server`.
    func reset(to server: ServerFormat, reactivated: Bool, at now: ContinuousClock.Instant) -> MediaServicesReset {
        MediaServicesReset(previousSampleRate: sampleRate, sampleRate: server.sampleRate, previousIOBufferFrames: period,
                           ioBufferFrames: server.period, reactivated: reactivated,
                           downtime: (now - lostAt).inSeconds)
    }
}
