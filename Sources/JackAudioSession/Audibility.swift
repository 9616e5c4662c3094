/// What the session tells the other sessions of its sound: its place in
/// the activation order, whether it is heard (`producingSound`, which
/// `isOtherAudioPlaying` and the secondary-audio hint read), whether it
/// lowers the others now (`ducking`), and how its last deactivation ended.
/// Pure: the driver hands it the output stage's last audible cycle and the
/// time on the monotonic clock. `SessionMachine` owns it and feeds it, so
/// it changes only in the phases where it may.
struct Audibility: Sendable, Equatable {
    /// JACK microseconds at the last activation request (0: never active).
    private(set) var order: UInt64 = 0
    /// The last deactivation asked the others to resume (notifyOthersOnDeactivation).
    private(set) var resumeOthers = false
    /// When the session last deactivated (others read how it ended).
    private(set) var deactivatedAt: ContinuousClock.Instant?
    /// The output carried sound within `hold`.
    private(set) var producingSound = false
    /// It lowers the others now (see `SessionState.ducking`).
    private(set) var ducking = false
    /// The output stage's count of the last cycle it heard, as last read.
    private var lastAudibleCycle: UInt64 = 0
    /// When the output was last heard (nil: never).
    private var lastAudibleAt: ContinuousClock.Instant?

    /// Seconds of silence after which a session no longer counts as producing sound.
    static let hold = 2.0

    /// What the output is, for a look at it.
    enum Output: Sendable, Equatable {
        /// Inactive, or a category without output: not heard, and ducks nothing.
        case none
        /// A measurement path, which is not watched: active means sounding.
        case measurement
        /// Watched: the output stage's count of the last cycle it heard.
        case watched(lastAudibleCycle: UInt64)
    }

    /// An activation announced to the others, with its place in the order:
    /// heard from now, as its audio starts.
    mutating func announced(order: UInt64, at now: ContinuousClock.Instant) {
        self.order = order
        heardAgain(at: now)
    }

    /// An activation done: `order` is its place (nil for a reset, which
    /// keeps its place; `clockMicroseconds` stands for one never taken).
    /// Heard from now; the output stage's count starts again.
    mutating func activated(order: UInt64?, clockMicroseconds: UInt64, at now: ContinuousClock.Instant) {
        if let order { self.order = order } else if self.order == 0 { self.order = clockMicroseconds }
        lastAudibleCycle = 0
        heardAgain(at: now)
    }

    /// Deactivated (or asked to while inactive): silent, and the others read
    /// whether to resume.
    mutating func deactivated(notifyingOthers: Bool, at now: ContinuousClock.Instant) {
        resumeOthers = notifyingOthers
        deactivatedAt = now
        producingSound = false
    }

    /// Silenced at once: interrupted, or an announced activation that failed.
    mutating func silenced() {
        producingSound = false
    }

    /// A look at the output: heard within `hold`, and ducking the others
    /// while `ducksOthers` (the duckOthers option) and not silent beyond
    /// `releaseHold` seconds (nil: ducking lasts while active). Whether
    /// either changed.
    @discardableResult
    mutating func looked(at output: Output, ducksOthers: Bool, releaseHold: Double?,
                         at now: ContinuousClock.Instant) -> Bool {
        let before = (producingSound, ducking)
        switch output {
        case .none:
            producingSound = false
            ducking = false
            return before != (producingSound, ducking)
        case .measurement:
            lastAudibleAt = now
        case let .watched(cycle):
            if cycle != lastAudibleCycle {
                lastAudibleCycle = cycle
                lastAudibleAt = now
            }
        }
        let silent = lastAudibleAt.map { (now - $0).inSeconds } ?? .infinity
        producingSound = silent <= Self.hold
        ducking = ducksOthers && silent <= (releaseHold ?? .infinity)
        return before != (producingSound, ducking)
    }

    /// Seconds a close waits after a deactivation, so the others read how it
    /// ended before the session's file goes (0.3 s after it; 0 when none).
    func lingerRemaining(at now: ContinuousClock.Instant) -> Double {
        guard let deactivatedAt else { return 0 }
        return max(0, 0.3 - (now - deactivatedAt).inSeconds)
    }

    private mutating func heardAgain(at now: ContinuousClock.Instant) {
        resumeOthers = false
        producingSound = true
        lastAudibleAt = now
    }
}
