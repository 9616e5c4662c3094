// seed-listings: the Swift listings of Apple's Audio Session Programming
// Guide (the seeds), written for JackAudioSession with only the module and
// type names changed, run against the JACK server $JACK_DEFAULT_SERVER
// (`make example-check` starts a private one). Devices are plugged with the
// test harness's simulated devices, a phone call is a second session. Each
// listing prints what it saw; any that does not see what the guide says ends
// the program with status 1, so the mapping cannot rot.
//
// The guide's `catch let error as NSError` lines stand as they are: the
// session's methods throw `AudioSessionError`, an NSError of AVAudioSession's
// domain, code and `localizedDescription` (the compiler notes that the cast
// always succeeds: the methods' typed throws say so already). They sit in
// functions, as in the guide's app: Swift 6.3.1 crashes ("Found ownership
// error") on such a catch in top-level code that also initialises a global
// with a closure (docs/SESSION.md, "Errors"); `catch-check` catches so at top level.
// One kind of line differs from the guide's, everywhere:
// * `addObserver(self, selector: #selector(...), name:object:)` is
//   `addObserver(forName:object:queue:using:)`: Linux Foundation has no
//   Objective-C selectors.
import Foundation
import JackAudioSession
import LoopbackHarness
import Synchronization

guard let serverName = ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] else {
    print("seed-listings: set JACK_DEFAULT_SERVER to a running JACK server's name (make example-check does)")
    exit(2)
}

/// What the notification handlers saw, read by the checks.
final class Seen: Sendable {
    let lines = Mutex<[String]>([])
    let headphonesConnected = Mutex(false)
    func note(_ line: String) { lines.withLock { $0.append(line) } }
    func saw(_ line: String) -> Bool { lines.withLock { $0.contains(line) } }
}
let seen = Seen()
nonisolated(unsafe) var failures = 0

func check(_ listing: String, _ condition: @autoclosure () -> Bool, _ detail: @autoclosure () -> String = "") {
    if condition() {
        print("\(listing): as the guide says")
    } else {
        failures += 1
        print("\(listing): NOT as the guide says \(detail())")
    }
}

/// Waits up to 5 s for `condition` (notifications arrive on the session's queue).
func eventually(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(5)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

// MARK: Listings 1 and 2: configure, then activate

// Access the shared, singleton audio session instance
let session = AudioSession.sharedInstance()
// In a function, as in the guide's app (see the note on the compiler at the top).
func configureAndActivate() {
    do {
        // Configure the audio session for movie playback
        try session.setCategory(AVAudioSessionCategoryPlayback,
                                mode: AVAudioSessionModeMoviePlayback,
                                options: [])
    } catch let error as NSError {
        print("Failed to set the audio session category and mode: \(error.localizedDescription)")
    }
    do {
        // 1) Configure your audio session category, options, and mode
        // 2) Activate your audio session to enable your custom configuration
        try session.setActive(true)
    } catch let error as NSError {
        print("Unable to activate audio session:  \(error.localizedDescription)")
    }
}
configureAndActivate()

check("listings 1-2 (setCategory, setActive)",
      session.isActive && session.category == .playback && session.mode == .moviePlayback && session.serverName == serverName,
      "\(session.category) \(session.mode) active \(session.isActive)")

// MARK: Listings 6-8: route changes

func handleRouteChange(_ notification: Notification) {
    guard let userInfo = notification.userInfo,
        let reasonValue = userInfo[AVAudioSessionRouteChangeReasonKey] as? UInt,
        let reason = AudioSession.RouteChangeReason(rawValue: reasonValue) else {
            return
    }
    switch reason {
    case .newDeviceAvailable:
        let session = AudioSession.sharedInstance()
        for output in session.currentRoute.outputs where output.portType == AVAudioSessionPortHeadphones {
            seen.headphonesConnected.withLock { $0 = true }
        }
    case .oldDeviceUnavailable:
        if let previousRoute =
            userInfo[AVAudioSessionRouteChangePreviousRouteKey] as? RouteDescription {
            for output in previousRoute.outputs where output.portType == AVAudioSessionPortHeadphones {
                seen.headphonesConnected.withLock { $0 = false }
            }
        }
    default: ()
    }
}
_ = NotificationCenter.default.addObserver(forName: .AVAudioSessionRouteChange, object: AudioSession.sharedInstance(),
                                           queue: nil, using: handleRouteChange)
let headphones = try SimulatedDevice(name: "headphones", serverName: serverName, type: .headphones)
check("listing 8 (headphones plugged: newDeviceAvailable)", eventually { seen.headphonesConnected.withLock { $0 } })
headphones.unplug()
check("listing 8 (headphones unplugged: oldDeviceUnavailable)", eventually { !seen.headphonesConnected.withLock { $0 } })

// MARK: Listings 4-5: interruptions

func handleInterruption(_ notification: Notification) {
    guard let info = notification.userInfo,
        let typeValue = info[AVAudioSessionInterruptionTypeKey] as? UInt,
        let type = AudioSession.InterruptionType(rawValue: typeValue) else {
            return
    }
    if type == .began {
        // Interruption began, take appropriate actions (save state, update user interface)
        seen.note("interruption began")
    }
    else if type == .ended {
        guard let optionsValue =
            info[AVAudioSessionInterruptionOptionKey] as? UInt else {
                return
        }
        let options = AudioSession.InterruptionOptions(rawValue: optionsValue)
        if options.contains(.shouldResume) {
            // Interruption Ended - playback should resume
            seen.note("interruption ended, should resume")
        }
    }
}
_ = NotificationCenter.default.addObserver(forName: .AVAudioSessionInterruption, object: AudioSession.sharedInstance(),
                                           queue: nil, using: handleInterruption)
let call = AudioSession(clientName: "phone-call", serverName: serverName)
try call.setCategory(.playAndRecord, mode: .voiceChat)
try call.setActive(true)
check("listing 5 (a call begins an interruption)", eventually { seen.saw("interruption began") } && !session.isActive)
try call.setActive(false, options: .notifyOthersOnDeactivation)
check("listing 5 (the call ends it with shouldResume)", eventually { seen.saw("interruption ended, should resume") })

// MARK: Listing 3: the secondary audio hint

func handleSecondaryAudio(notification: Notification) {
    // Determine hint type
    guard let userInfo = notification.userInfo,
        let typeValue = userInfo[AVAudioSessionSilenceSecondaryAudioHintTypeKey] as? UInt,
        let type = AudioSession.SilenceSecondaryAudioHintType(rawValue: typeValue) else {
            return
    }

    if type == .begin {
        // Other app audio started playing - mute secondary audio
        seen.note("secondary audio: mute")
    } else {
        // Other app audio stopped playing - restart secondary audio
        seen.note("secondary audio: restart")
    }
}
_ = NotificationCenter.default.addObserver(forName: .AVAudioSessionSilenceSecondaryAudioHint,
                                           object: AudioSession.sharedInstance(), queue: nil, using: handleSecondaryAudio)
try session.setCategory(AVAudioSessionCategoryAmbient)
try session.setActive(true)
let podcast = AudioSession(clientName: "podcast", serverName: serverName)
try podcast.setCategory(.playback, mode: .spokenAudio)
try podcast.setActive(true)
check("listing 3 (another app's primary audio: begin)", eventually { seen.saw("secondary audio: mute") })
try podcast.setActive(false)
check("listing 3 (it stopped: end)", eventually { seen.saw("secondary audio: restart") })
podcast.close()
call.close()
try session.setActive(false)

// MARK: Listing 9: preferred hardware values

// In a function, as in the guide's app (see the note on the compiler at the top).
func setPreferredHardwareValues() {
    // Configure category and mode
    do {
        try session.setCategory(AVAudioSessionCategoryRecord, mode: AVAudioSessionModeDefault)
    } catch let error as NSError {
        print("Unable to set category:  \(error.localizedDescription)")
    }

    // Set preferred sample rate
    do {
        try session.setPreferredSampleRate(44_100)
    } catch let error as NSError {
        print("Unable to set preferred sample rate:  \(error.localizedDescription)")
    }

    // Set preferred I/O buffer duration
    do {
        try session.setPreferredIOBufferDuration(0.005)
    } catch let error as NSError {
        print("Unable to set preferred I/O buffer duration:  \(error.localizedDescription)")
    }

    // Activate the audio session
    do {
        try session.setActive(true)
    } catch let error as NSError {
        print("Unable to activate session. \(error.localizedDescription)")
    }
}
setPreferredHardwareValues()

// Query the audio session's ioBufferDuration and sampleRate properties
// to determine if the preferred values were set
print("Audio Session ioBufferDuration: \(session.ioBufferDuration), sampleRate: \(session.sampleRate)")
check("listing 9 (the values the server gave)", session.sampleRate > 0 && session.ioBufferDuration > 0
          && (session.sampleRate == 44_100 || session.sampleRateMismatch != nil),
      "rate \(session.sampleRate), mismatch \(String(describing: session.sampleRateMismatch))")
try session.setActive(false)

// MARK: Listing 10: a microphone and its polar pattern

let iPhoneMicrophones = try SimulatedDevice(
    name: "iphone-mic", serverName: serverName, type: .builtInMic, channels: 3, banks: ["Bottom", "Front", "Back"],
    traits: ["Bottom": DataSourceTraits(location: .lower, orientation: .bottom),
             "Front": DataSourceTraits(location: .upper, orientation: .front,
                                       supportedPolarPatterns: [.omnidirectional, .cardioid], selectedPolarPattern: .omnidirectional),
             "Back": DataSourceTraits(location: .upper, orientation: .back,
                                      supportedPolarPatterns: [.omnidirectional, .cardioid], selectedPolarPattern: .omnidirectional)])
try session.setCategory(.playAndRecord)
try session.setActive(true)

func selectFrontCardioid() {
    // Preferred Mic = Front, Preferred Polar Pattern = Cardioid
    let preferredMicOrientation = AVAudioSessionOrientationFront
    let preferredPolarPattern = AVAudioSessionPolarPatternCardioid

    // Retrieve your configured and activated audio session
    let session = AudioSession.sharedInstance()

    // Get available inputs
    guard let inputs = session.availableInputs else { return }

    // Find built-in mic
    guard let builtInMic = inputs.first(where: {
        $0.portType == AVAudioSessionPortBuiltInMic
    }) else { return }

    // Find the data source at the specified orientation
    guard let dataSource = builtInMic.dataSources?.first (where: {
        $0.orientation == preferredMicOrientation
    }) else { return }

    // Set data source's polar pattern
    do {
        try dataSource.setPreferredPolarPattern(preferredPolarPattern)
    } catch let error as NSError {
        print("Unable to preferred polar pattern: \(error.localizedDescription)")
    }

    // Set the data source as the input's preferred data source
    do {
        try builtInMic.setPreferredDataSource(dataSource)
    } catch let error as NSError {
        print("Unable to preferred dataSource: \(error.localizedDescription)")
    }

    // Set the built-in mic as the preferred input
    // This call will be a no-op if already selected
    do {
        try session.setPreferredInput(builtInMic)
    } catch let error as NSError {
        print("Unable to preferred input: \(error.localizedDescription)")
    }
}
selectFrontCardioid()
// The device switches its pattern when it reads the wish: the route follows.
_ = eventually { session.currentRoute.inputs.first?.selectedDataSource?.selectedPolarPattern == .cardioid }

// Print Active Configuration
session.currentRoute.inputs.forEach { portDesc in
    print("Port: \(portDesc.portType)")
    if let ds = portDesc.selectedDataSource {
        print("Name: \(ds.dataSourceName)")
        print("Polar Pattern: \(ds.selectedPolarPattern ?? "[none]")")
        seen.note("\(portDesc.portType) \(ds.dataSourceName) \(ds.selectedPolarPattern ?? "[none]")")
    }
}
check("listing 10 (Port: MicrophoneBuiltIn, Name: Front, Polar Pattern: Cardioid)", seen.saw("builtInMic Front Cardioid"),
      "\(seen.lines.withLock { $0 })")
try session.setActive(false)
iPhoneMicrophones.unplug()

// MARK: Listing 11: record permission

// The system's alert is the app's prompt here (a headless machine has none): this one says yes.
session.setRecordPermissionPrompt { _, _ in true }
let answered = DispatchSemaphore(value: 0)
AudioSession.sharedInstance().requestRecordPermission { granted in
    if granted {
        // User granted access. Present recording interface.
        seen.note("permission granted")
    } else {
        // Present message to user indicating that recording
        // can't be performed until they change their preference
        // under Settings -> Privacy -> Microphone
        seen.note("permission denied")
    }
    answered.signal()
}
_ = answered.wait(timeout: .now() + 5)
check("listing 11 (requestRecordPermission)", seen.saw("permission granted") && session.recordPermission == .granted)

session.close()
print(failures == 0 ? "seed-listings: every listing as the guide says" : "seed-listings: \(failures) listing(s) not as the guide says")
exit(failures == 0 ? 0 : 1)
