import JackAudioSession

/// What a player does with its session's events, as the seeds' playback
/// apps do: it pauses when interrupted, activates again and plays on when
/// the interruption ends with `shouldResume` (and stays paused without it),
/// and pauses, staying active, when its output device goes away (a
/// multiRoute player keeps its other streams). Pure: `action(for:)` decides,
/// `follow` carries it out on a session and a `StreamSignals`.
public struct PlaybackPolicy: Sendable {
    /// What the player does about one event.
    public enum Action: Sendable, Equatable {
        /// Interrupted: pause.
        case pause
        /// The interruption ended with `shouldResume`: activate again and play on.
        case resume
        /// The interruption ended without `shouldResume`: the player stays paused.
        case stayPaused
        /// The output device went away: paused, still active.
        case pauseForDeviceLoss
    }

    /// What happened when an action was carried out.
    public enum Outcome: Sendable, Equatable {
        /// The player paused.
        case paused
        /// The session is active again and the player plays.
        case resumed
        /// The player stays paused (no `shouldResume`).
        case stayedPaused
        /// The player paused for a lost device, still active.
        case pausedForDeviceLoss
        /// Activating again failed: the player stays paused.
        case resumeFailed(AudioSessionError)
    }

    /// The player's category (a multiRoute player keeps its other streams).
    public let category: Category

    /// The policy of a player in `category`.
    public init(category: Category) {
        self.category = category
    }

    /// The action for `event`, or nil when the player does nothing about it.
    public func action(for event: AudioSessionEvent) -> Action? {
        switch event {
        case .interruption(type: .began, _, _): .pause
        case let .interruption(type: .ended, options, _): options.contains(.shouldResume) ? .resume : .stayPaused
        case .routeChange(reason: .oldDeviceUnavailable, _, _, _) where category != .multiRoute: .pauseForDeviceLoss
        default: nil
        }
    }

    /// Carries out the action for `event` on `session` and `player`.
    public func follow(_ event: AudioSessionEvent, session: AudioSession, player: StreamSignals) -> Outcome? {
        switch action(for: event) {
        case .pause?:
            player.setPaused(true)
            return .paused
        case .resume?:
            do {
                try session.setActive(true)
            } catch {
                return .resumeFailed(error)
            }
            player.setPaused(false)
            return .resumed
        case .stayPaused?:
            return .stayedPaused
        case .pauseForDeviceLoss?:
            player.setPaused(true)
            return .pausedForDeviceLoss
        case nil:
            return nil
        }
    }
}
