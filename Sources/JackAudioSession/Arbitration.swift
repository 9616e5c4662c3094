import Foundation

/// How sessions in different processes share the server: who interrupts whom,
/// who may activate, who is ducked. Pure functions of the published states,
/// so every process reaches the same answer from the same states.
public enum Arbitration {
    /// Whether `a` activated before `b` (JACK time, then client UUID).
    public static func precedes(_ a: PublishedSession, _ b: PublishedSession) -> Bool {
        (a.state.order, a.uuid) < (b.state.order, b.uuid)
    }

    /// Whether the active session `t` interrupts the active session `s`:
    /// * a call interrupts every ordinary session that was active when it
    ///   started, and the non-mixable ones whenever they activated ("the phone
    ///   always wins"); a mixable session that activates during the call plays
    ///   along with it; nothing but an earlier call interrupts a call;
    /// * otherwise only a later activation interrupts: a non-mixable one
    ///   interrupts the non-mixable ones, and one with
    ///   interruptSpokenAudioAndMixWithOthers interrupts spokenAudio sessions.
    public static func interrupts(_ t: PublishedSession, _ s: PublishedSession) -> Bool {
        guard t.uuid != s.uuid, t.state.active, s.state.active else { return false }
        if s.state.priority == .call { return t.state.priority == .call && precedes(t, s) }
        if t.state.priority == .call { return precedes(s, t) || !s.state.isMixable }
        guard precedes(s, t) else { return false }
        if !t.state.isMixable && !s.state.isMixable { return true }
        return t.state.categoryOptions.contains(.interruptSpokenAudioAndMixWithOthers) && s.state.mode == .spokenAudio
    }

    /// The session that interrupts `me`, if any (the latest such activation).
    public static func interrupter(of me: PublishedSession, among others: [PublishedSession]) -> PublishedSession? {
        others.filter { interrupts($0, me) }.max { precedes($0, $1) }
    }

    /// The call that stops a session from activating, if any: "If another
    /// active audio session has higher priority than yours (for example, a
    /// phone call), and neither audio session allows mixing, attempting to
    /// activate your audio session will fail" (insufficientPriority).
    public static func blockingCall(for me: UInt64, isMixable: Bool,
                                    among others: [PublishedSession]) -> PublishedSession? {
        guard !isMixable else { return nil }
        return others.first { $0.uuid != me && $0.state.active && $0.state.priority == .call && !$0.state.isMixable }
    }

    /// The gain `me` plays at: the lowest duck level of the other sessions
    /// that are ducking now, or 1. Measurement-mode sessions are never ducked
    /// (a measurement stays bit-exact), and neither is a call.
    public static func duckGain(for me: PublishedSession, among others: [PublishedSession]) -> Float {
        guard me.state.active, me.state.mode != .measurement, me.state.priority != .call else { return 1 }
        let levels = others.filter { $0.uuid != me.uuid && $0.state.active && $0.state.ducking }.map(\.state.duckLevelDB)
        guard let lowest = levels.min() else { return 1 }
        return Float(pow(10, lowest / 20))
    }

    /// Whether another session is active and producing sound.
    public static func isOtherAudioPlaying(for me: UInt64, among others: [PublishedSession]) -> Bool {
        others.contains { $0.uuid != me && $0.state.active && $0.state.producingSound && $0.state.category.hasOutput }
    }

    /// Whether another session's primary (non-mixable) audio is playing, so
    /// secondary audio such as a game's soundtrack should be silenced.
    public static func secondaryAudioShouldBeSilenced(for me: UInt64, among others: [PublishedSession]) -> Bool {
        others.contains {
            $0.uuid != me && $0.state.active && $0.state.producingSound && !$0.state.isMixable
                && $0.state.category.hasOutput
        }
    }
}
