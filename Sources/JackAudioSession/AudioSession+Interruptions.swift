import Foundation
import JackKit

extension AudioSession {
    /// A session's priority class. `call` stands for the phone: it interrupts
    /// every other session, mixable or not, and nothing interrupts it or
    /// activates while it is active (`insufficientPriority`).
    public enum Priority: String, Sendable, Codable, CaseIterable {
        /// An ordinary session, or one that stands for a phone call.
        case ordinary, call
    }

    // MARK: Settings

    /// The priority class (default ordinary); applies from the next activation.
    public var priority: Priority { board.read { $0.arbitration.priority } }

    /// Sets the priority class.
    public func setPriority(_ priority: Priority) {
        core.sync { $0.arbitration.priority = priority }
    }

    /// How far this session lowers the others while it ducks them, dB (default −20).
    public var duckLevel: Double { board.read { $0.arbitration.duckLevelDB } }

    /// Sets the duck level, dB in −96…0.
    public func setDuckLevel(_ decibels: Double) throws(AudioSessionError) {
        guard decibels.isFinite, (-96...0).contains(decibels) else {
            throw AudioSessionError(.badParam, "duck level must be between -96 and 0 dB, got \(decibels)")
        }
        core.sync { $0.arbitration.duckLevelDB = decibels }
        scheduleArbitration()
    }

    /// Seconds of silence after which a ducking session stops ducking the
    /// others although still active; nil (the default): ducking ends when the
    /// session deactivates, as the seeds say ("ducking begins when you
    /// activate your app's audio session and ends when you deactivate the
    /// session"). The hold is ours, for a prompt player that stays active.
    public var duckReleaseHold: Double? { board.read { $0.arbitration.duckReleaseHold } }

    /// Sets the duck-release hold, seconds (≥ 0), or nil for none.
    public func setDuckReleaseHold(_ seconds: Double?) throws(AudioSessionError) {
        if let seconds, !(seconds.isFinite && seconds >= 0) {
            throw AudioSessionError(.badParam, "duck release hold must be a non-negative number of seconds, got \(seconds)")
        }
        core.sync { $0.arbitration.duckReleaseHold = seconds }
    }

    // MARK: What the others do

    /// Whether another session on the server is active and producing sound.
    public var isOtherAudioPlaying: Bool {
        core.sync { core in
            guard let client = core.openClient else { return false }
            return Arbitration.isOtherAudioPlaying(for: client.uuid, among: core.publishedSessions(using: client) ?? [])
        }
    }

    /// Whether another session's primary (non-mixable) audio is playing.
    public var secondaryAudioShouldBeSilencedHint: Bool {
        core.sync { core in
            guard let client = core.openClient else { return false }
            return Arbitration.secondaryAudioShouldBeSilenced(for: client.uuid,
                                                              among: core.publishedSessions(using: client) ?? [])
        }
    }

    /// Whether the session was interrupted and the interruption has not ended.
    public var isInterrupted: Bool { board.read { $0.machine.interrupter != nil } }

    /// The JACK client name of the session interrupting this one (nil: none).
    public var interruptingClient: String? { board.read { $0.machine.interrupter?.state.client } }

    /// Whether another session lowers this one now.
    public var isDucked: Bool { board.read { $0.machine.ducked } }

    /// Every session published on the server, this one included.
    public func publishedSessions() -> [PublishedSession] {
        core.sync { core in
            guard let client = core.openClient else { return [] }
            return core.publishedSessions(using: client) ?? []
        }
    }

}
