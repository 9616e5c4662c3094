import Foundation

// The names the seeds' listings write, so that code ported from them reads
// the same: `.AVAudioSessionInterruption` as a notification name, and
// `AVAudioSessionInterruptionTypeKey` and its siblings as userInfo keys.
// Each is the same value as its `AudioSessionNotification` name.

extension Notification.Name {
    /// The seeds' name for `AudioSessionNotification.interruption`.
    public static let AVAudioSessionInterruption = AudioSessionNotification.interruption
    /// The seeds' name for `AudioSessionNotification.routeChange`.
    public static let AVAudioSessionRouteChange = AudioSessionNotification.routeChange
    /// The seeds' name for `AudioSessionNotification.mediaServicesWereLost`.
    public static let AVAudioSessionMediaServicesWereLost = AudioSessionNotification.mediaServicesWereLost
    /// The seeds' name for `AudioSessionNotification.mediaServicesWereReset`.
    public static let AVAudioSessionMediaServicesWereReset = AudioSessionNotification.mediaServicesWereReset
    /// The seeds' name for `AudioSessionNotification.silenceSecondaryAudioHint`.
    public static let AVAudioSessionSilenceSecondaryAudioHint = AudioSessionNotification.silenceSecondaryAudioHint
}

/// The seeds' name for `AudioSessionNotification.interruptionTypeKey`.
public let AVAudioSessionInterruptionTypeKey = AudioSessionNotification.interruptionTypeKey
/// The seeds' name for `AudioSessionNotification.interruptionOptionKey`.
public let AVAudioSessionInterruptionOptionKey = AudioSessionNotification.interruptionOptionKey
/// Never posted: a process here is not suspended while it is interrupted, so
/// no interruption was one it slept through (where the key is absent,
/// AVAudioSession means the same).
public let AVAudioSessionInterruptionWasSuspendedKey = "AVAudioSessionInterruptionWasSuspendedKey"
/// The seeds' name for `AudioSessionNotification.routeChangeReasonKey`.
public let AVAudioSessionRouteChangeReasonKey = AudioSessionNotification.routeChangeReasonKey
/// The seeds' name for `AudioSessionNotification.routeChangePreviousRouteKey`.
public let AVAudioSessionRouteChangePreviousRouteKey = AudioSessionNotification.routeChangePreviousRouteKey
/// The seeds' name for `AudioSessionNotification.silenceSecondaryAudioHintTypeKey`.
public let AVAudioSessionSilenceSecondaryAudioHintTypeKey = AudioSessionNotification.silenceSecondaryAudioHintTypeKey

// The guide's data-source listing names orientations, polar patterns and
// port types by their Objective-C constants.
/// The seeds' name for `DataSourceOrientation.top`.
public let AVAudioSessionOrientationTop = DataSourceOrientation.top
/// The seeds' name for `DataSourceOrientation.bottom`.
public let AVAudioSessionOrientationBottom = DataSourceOrientation.bottom
/// The seeds' name for `DataSourceOrientation.front`.
public let AVAudioSessionOrientationFront = DataSourceOrientation.front
/// The seeds' name for `DataSourceOrientation.back`.
public let AVAudioSessionOrientationBack = DataSourceOrientation.back
/// The seeds' name for `DataSourceOrientation.left`.
public let AVAudioSessionOrientationLeft = DataSourceOrientation.left
/// The seeds' name for `DataSourceOrientation.right`.
public let AVAudioSessionOrientationRight = DataSourceOrientation.right
/// The seeds' name for `DataSourceLocation.upper`.
public let AVAudioSessionLocationUpper = DataSourceLocation.upper
/// The seeds' name for `DataSourceLocation.lower`.
public let AVAudioSessionLocationLower = DataSourceLocation.lower
/// The seeds' name for `PolarPattern.omnidirectional`.
public let AVAudioSessionPolarPatternOmnidirectional = PolarPattern.omnidirectional
/// The seeds' name for `PolarPattern.cardioid`.
public let AVAudioSessionPolarPatternCardioid = PolarPattern.cardioid
/// The seeds' name for `PolarPattern.subcardioid`.
public let AVAudioSessionPolarPatternSubcardioid = PolarPattern.subcardioid
/// The seeds' name for `PolarPattern.stereo`.
public let AVAudioSessionPolarPatternStereo = PolarPattern.stereo
/// The seeds' name for `AudioSessionPort.builtInMic`.
public let AVAudioSessionPortBuiltInMic = AudioSessionPort.builtInMic
/// The seeds' name for `AudioSessionPort.headsetMic`.
public let AVAudioSessionPortHeadsetMic = AudioSessionPort.headsetMic
/// The seeds' name for `AudioSessionPort.lineIn`.
public let AVAudioSessionPortLineIn = AudioSessionPort.lineIn
/// The seeds' name for `AudioSessionPort.usbAudio`.
public let AVAudioSessionPortUSBAudio = AudioSessionPort.usbAudio
/// The seeds' name for `AudioSessionPort.bluetoothHFP`.
public let AVAudioSessionPortBluetoothHFP = AudioSessionPort.bluetoothHFP
/// The seeds' name for `AudioSessionPort.carAudio`.
public let AVAudioSessionPortCarAudio = AudioSessionPort.carAudio
/// The seeds' name for `AudioSessionPort.builtInSpeaker`.
public let AVAudioSessionPortBuiltInSpeaker = AudioSessionPort.builtInSpeaker
/// The seeds' name for `AudioSessionPort.builtInReceiver`.
public let AVAudioSessionPortBuiltInReceiver = AudioSessionPort.builtInReceiver
/// The seeds' name for `AudioSessionPort.headphones`.
public let AVAudioSessionPortHeadphones = AudioSessionPort.headphones
/// The seeds' name for `AudioSessionPort.lineOut`.
public let AVAudioSessionPortLineOut = AudioSessionPort.lineOut
/// The seeds' name for `AudioSessionPort.HDMI`.
public let AVAudioSessionPortHDMI = AudioSessionPort.HDMI
/// The seeds' name for `AudioSessionPort.bluetoothA2DP`.
public let AVAudioSessionPortBluetoothA2DP = AudioSessionPort.bluetoothA2DP
/// The seeds' name for `AudioSessionPort.bluetoothLE`.
public let AVAudioSessionPortBluetoothLE = AudioSessionPort.bluetoothLE
/// The seeds' name for `AudioSessionPort.airPlay`.
public let AVAudioSessionPortAirPlay = AudioSessionPort.airPlay

// Categories and modes by the constants the guide's listings write
// (`setCategory(AVAudioSessionCategoryPlayback, mode: AVAudioSessionModeMoviePlayback)`).
/// The seeds' name for `Category.ambient`.
public let AVAudioSessionCategoryAmbient = Category.ambient
/// The seeds' name for `Category.soloAmbient`.
public let AVAudioSessionCategorySoloAmbient = Category.soloAmbient
/// The seeds' name for `Category.playback`.
public let AVAudioSessionCategoryPlayback = Category.playback
/// The seeds' name for `Category.record`.
public let AVAudioSessionCategoryRecord = Category.record
/// The seeds' name for `Category.playAndRecord`.
public let AVAudioSessionCategoryPlayAndRecord = Category.playAndRecord
/// The seeds' name for `Category.audioProcessing`.
public let AVAudioSessionCategoryAudioProcessing = Category.audioProcessing
/// The seeds' name for `Category.multiRoute`.
public let AVAudioSessionCategoryMultiRoute = Category.multiRoute
/// The seeds' name for `Mode.default`.
public let AVAudioSessionModeDefault = Mode.default
/// The seeds' name for `Mode.voiceChat`.
public let AVAudioSessionModeVoiceChat = Mode.voiceChat
/// The seeds' name for `Mode.gameChat`.
public let AVAudioSessionModeGameChat = Mode.gameChat
/// The seeds' name for `Mode.videoRecording`.
public let AVAudioSessionModeVideoRecording = Mode.videoRecording
/// The seeds' name for `Mode.measurement`.
public let AVAudioSessionModeMeasurement = Mode.measurement
/// The seeds' name for `Mode.moviePlayback`.
public let AVAudioSessionModeMoviePlayback = Mode.moviePlayback
/// The seeds' name for `Mode.videoChat`.
public let AVAudioSessionModeVideoChat = Mode.videoChat
/// The seeds' name for `Mode.spokenAudio`.
public let AVAudioSessionModeSpokenAudio = Mode.spokenAudio
/// The seeds' name for `CategoryOptions.mixWithOthers`.
public let AVAudioSessionCategoryOptionMixWithOthers = CategoryOptions.mixWithOthers
/// The seeds' name for `CategoryOptions.duckOthers`.
public let AVAudioSessionCategoryOptionDuckOthers = CategoryOptions.duckOthers
/// The seeds' name for `CategoryOptions.allowBluetooth`.
public let AVAudioSessionCategoryOptionAllowBluetooth = CategoryOptions.allowBluetooth
/// The seeds' name for `CategoryOptions.defaultToSpeaker`.
public let AVAudioSessionCategoryOptionDefaultToSpeaker = CategoryOptions.defaultToSpeaker
/// The seeds' name for `CategoryOptions.interruptSpokenAudioAndMixWithOthers`.
public let AVAudioSessionCategoryOptionInterruptSpokenAudioAndMixWithOthers = CategoryOptions.interruptSpokenAudioAndMixWithOthers
/// The seeds' name for `CategoryOptions.allowAirPlay`.
public let AVAudioSessionCategoryOptionAllowAirPlay = CategoryOptions.allowAirPlay
