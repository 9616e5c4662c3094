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

// The guide's data-source listing names orientations, polar patterns and
// port types by their Objective-C constants.
public let AVAudioSessionOrientationTop = DataSourceOrientation.top
public let AVAudioSessionOrientationBottom = DataSourceOrientation.bottom
public let AVAudioSessionOrientationFront = DataSourceOrientation.front
public let AVAudioSessionOrientationBack = DataSourceOrientation.back
public let AVAudioSessionOrientationLeft = DataSourceOrientation.left
public let AVAudioSessionOrientationRight = DataSourceOrientation.right
public let AVAudioSessionLocationUpper = DataSourceLocation.upper
public let AVAudioSessionLocationLower = DataSourceLocation.lower
public let AVAudioSessionPolarPatternOmnidirectional = PolarPattern.omnidirectional
public let AVAudioSessionPolarPatternCardioid = PolarPattern.cardioid
public let AVAudioSessionPolarPatternSubcardioid = PolarPattern.subcardioid
public let AVAudioSessionPolarPatternStereo = PolarPattern.stereo
public let AVAudioSessionPortBuiltInMic = AudioSessionPort.builtInMic
public let AVAudioSessionPortHeadsetMic = AudioSessionPort.headsetMic
public let AVAudioSessionPortLineIn = AudioSessionPort.lineIn
public let AVAudioSessionPortUSBAudio = AudioSessionPort.usbAudio
public let AVAudioSessionPortBluetoothHFP = AudioSessionPort.bluetoothHFP
public let AVAudioSessionPortCarAudio = AudioSessionPort.carAudio
public let AVAudioSessionPortBuiltInSpeaker = AudioSessionPort.builtInSpeaker
public let AVAudioSessionPortBuiltInReceiver = AudioSessionPort.builtInReceiver
public let AVAudioSessionPortHeadphones = AudioSessionPort.headphones
public let AVAudioSessionPortLineOut = AudioSessionPort.lineOut
public let AVAudioSessionPortHDMI = AudioSessionPort.HDMI
public let AVAudioSessionPortBluetoothA2DP = AudioSessionPort.bluetoothA2DP
public let AVAudioSessionPortBluetoothLE = AudioSessionPort.bluetoothLE
public let AVAudioSessionPortAirPlay = AudioSessionPort.airPlay

// Categories and modes by the constants the guide's listings write
// (`setCategory(AVAudioSessionCategoryPlayback, mode: AVAudioSessionModeMoviePlayback)`).
public let AVAudioSessionCategoryAmbient = Category.ambient
public let AVAudioSessionCategorySoloAmbient = Category.soloAmbient
public let AVAudioSessionCategoryPlayback = Category.playback
public let AVAudioSessionCategoryRecord = Category.record
public let AVAudioSessionCategoryPlayAndRecord = Category.playAndRecord
public let AVAudioSessionCategoryAudioProcessing = Category.audioProcessing
public let AVAudioSessionCategoryMultiRoute = Category.multiRoute
public let AVAudioSessionModeDefault = Mode.default
public let AVAudioSessionModeVoiceChat = Mode.voiceChat
public let AVAudioSessionModeGameChat = Mode.gameChat
public let AVAudioSessionModeVideoRecording = Mode.videoRecording
public let AVAudioSessionModeMeasurement = Mode.measurement
public let AVAudioSessionModeMoviePlayback = Mode.moviePlayback
public let AVAudioSessionModeVideoChat = Mode.videoChat
public let AVAudioSessionModeSpokenAudio = Mode.spokenAudio
public let AVAudioSessionCategoryOptionMixWithOthers = CategoryOptions.mixWithOthers
public let AVAudioSessionCategoryOptionDuckOthers = CategoryOptions.duckOthers
public let AVAudioSessionCategoryOptionAllowBluetooth = CategoryOptions.allowBluetooth
public let AVAudioSessionCategoryOptionDefaultToSpeaker = CategoryOptions.defaultToSpeaker
public let AVAudioSessionCategoryOptionInterruptSpokenAudioAndMixWithOthers = CategoryOptions.interruptSpokenAudioAndMixWithOthers
public let AVAudioSessionCategoryOptionAllowAirPlay = CategoryOptions.allowAirPlay
