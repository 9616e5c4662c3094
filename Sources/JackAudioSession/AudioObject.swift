/// Something that plays or records through a session (a player, a recorder,
/// a meter). While one attached to a session is running, the session cannot
/// be deactivated (`isBusy`, as AVAudioSession says of its audio objects).
public protocol AudioObject: AnyObject, Sendable {
    /// Whether the object is producing or consuming audio now.
    var isRunning: Bool { get }
}
