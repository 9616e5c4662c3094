import Foundation

// The names the seeds' listings write, so that code ported from them reads
// the same: `.AVAudioSessionInterruption` as a notification name, and
// `AVAudioSessionInterruptionTypeKey` and its siblings as userInfo keys.
// Each is the same value as its `AudioSessionNotification` name.

extension Notification.Name {
    public static let AVAudioSessionInterruption = AudioSessionNotification.interruption
    public static let AVAudioSessionRouteChange = AudioSessionNotification.routeChange
    public static let AVAudioSessionMediaServicesWereLost = AudioSessionNotification.mediaServicesWereLost
    public static let AVAudioSessionMediaServicesWereReset = AudioSessionNotification.mediaServicesWereReset
    public static let AVAudioSessionSilenceSecondaryAudioHint = AudioSessionNotification.silenceSecondaryAudioHint
}

public let AVAudioSessionInterruptionTypeKey = AudioSessionNotification.interruptionTypeKey
public let AVAudioSessionInterruptionOptionKey = AudioSessionNotification.interruptionOptionKey
/// Never posted: a process here is not suspended while it is interrupted, so
/// no interruption was one it slept through (where the key is absent,
/// AVAudioSession means the same).
public let AVAudioSessionInterruptionWasSuspendedKey = "AVAudioSessionInterruptionWasSuspendedKey"
public let AVAudioSessionRouteChangeReasonKey = AudioSessionNotification.routeChangeReasonKey
public let AVAudioSessionRouteChangePreviousRouteKey = AudioSessionNotification.routeChangePreviousRouteKey
public let AVAudioSessionSilenceSecondaryAudioHintTypeKey = AudioSessionNotification.silenceSecondaryAudioHintTypeKey
