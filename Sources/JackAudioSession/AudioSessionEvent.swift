import Foundation
import Synchronization

/// Whether an interruption began or ended (AVAudioSessionInterruptionType,
/// with its raw values: Began = 1, Ended = 0).
public enum InterruptionType: UInt, Sendable, Codable {
    /// The interruption is over.
    case ended = 0
    /// Another session took the audio.
    case began = 1

    /// The name as AVAudioSession spells it: "began", "ended".
    public var name: String { self == .began ? "began" : "ended" }
}

/// Whether secondary audio should be silenced (AVAudioSessionSilenceSecondaryAudioHintType,
/// with its raw values: Begin = 1, End = 0).
public enum SilenceSecondaryAudioHintType: UInt, Sendable, Codable {
    /// Other audio that is not mixable has stopped.
    case end = 0
    /// Other audio that is not mixable has started: silence secondary audio.
    case begin = 1
}

/// Why an interruption happened. Not in the seeds: posted under
/// `AudioSessionNotification.interruptionCauseKey` as its raw value.
public enum InterruptionReason: String, Sendable, Codable {
    /// Another session took the audio.
    case `default`
    /// A call-class session started.
    case callStarted
}

/// Options that come with an interruption's end.
public struct InterruptionOptions: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// The interrupter deactivated with notifyOthersOnDeactivation: resume now.
    public static let shouldResume = InterruptionOptions(rawValue: 1)
}

/// Something the session tells the app.
public enum AudioSessionEvent: Sendable, Equatable {
    /// Another session interrupted this one, or the interruption ended.
    case interruption(type: InterruptionType, options: InterruptionOptions, reason: InterruptionReason)
    /// The session's audio now goes through other devices. Under multiRoute,
    /// `streams` names the output streams whose destination device went away
    /// (`oldDeviceUnavailable`) or came back (`newDeviceAvailable`).
    case routeChange(reason: RouteChangeReason, previousRoute: RouteDescription, currentRoute: RouteDescription,
                     streams: [String])
    /// The JACK server went away (the reason JACK gave).
    case mediaServicesWereLost(reason: String)
    /// The session rebuilt itself on a returned JACK server; what changed.
    case mediaServicesWereReset(MediaServicesReset)
    /// Other sessions' primary audio started (true) or stopped (false).
    case silenceSecondaryAudioHint(begin: Bool)
    /// The server reported xruns: `count` since the last xrun event, `total`
    /// since the session opened, how late the last one was, microseconds, and
    /// JACK's frame time of the cycle in which the first of them was
    /// reported (`jack_last_frame_time` when it came; nil: not known). The
    /// event itself comes up to 250 ms later (xruns are said at most four
    /// times a second), so the frame time of its arrival is not the xrun's.
    case xrun(count: Int, total: Int, delayMicroseconds: Double, atFrameTime: UInt32?)
    /// The server's period changed (by this session or any other client).
    case ioBufferDurationChange(seconds: Double, frames: Int)
    /// The server cannot do something jackd2 does (said once per session,
    /// when its client first finds it): what is missing, what it costs, and
    /// the configuration that adds it.
    case serverLimitation(ServerLimitation)
    /// The server runs at another rate than the preferred one (a running
    /// JACK server keeps its rate): said when the preference is set, when the
    /// session reaches a server and after a reset, once for each pair of rates.
    case sampleRateMismatch(SampleRateMismatch)
}

/// A preferred sample rate the server does not run.
public struct SampleRateMismatch: Sendable, Equatable {
    /// What the app asked for, Hz.
    public let preferredSampleRate: Double
    /// What the server runs, Hz.
    public let sampleRate: Double

    /// A mismatch between `preferredSampleRate` and the server's `sampleRate`.
    public init(preferredSampleRate: Double, sampleRate: Double) {
        self.preferredSampleRate = preferredSampleRate
        self.sampleRate = sampleRate
    }
}

/// AVAudioSession's notification names and userInfo keys, for code written
/// against AVAudioSession. Each is posted with the session as its object, and
/// each of AVAudioSession's keys carries the type and numbers the seeds give
/// (an unsigned integer for a type, reason or options). What this package adds
/// is under keys of its own, prefixed `JackAudioSession`.
public enum AudioSessionNotification {
    /// Posted when another session interrupts this one, or ends the interruption.
    public static let interruption = Notification.Name("AVAudioSessionInterruptionNotification")
    /// Posted when the session's route changes.
    public static let routeChange = Notification.Name("AVAudioSessionRouteChangeNotification")
    /// Posted when the JACK server went away (stopped, killed, or unreachable).
    public static let mediaServicesWereLost = Notification.Name("AVAudioSessionMediaServicesWereLostNotification")
    /// Posted when a server is back and the session has rebuilt itself on it.
    public static let mediaServicesWereReset = Notification.Name("AVAudioSessionMediaServicesWereResetNotification")
    /// Posted when other audio that is not mixable starts or stops, to a session that is mixable.
    public static let silenceSecondaryAudioHint = Notification.Name("AVAudioSessionSilenceSecondaryAudioHintNotification")
    /// Not in AVAudioSession: JACK xruns (`xrunCountKey`, `xrunTotalKey`, `xrunDelayKey`).
    public static let xrun = Notification.Name("JackAudioSessionXrunNotification")
    /// Not in AVAudioSession: the period changed (`ioBufferDurationKey`, `ioBufferFramesKey`).
    public static let ioBufferDurationChange = Notification.Name("JackAudioSessionIOBufferDurationChangeNotification")
    /// Not in AVAudioSession: the server lacks something jackd2 has (`limitationKey`).
    public static let serverLimitation = Notification.Name("JackAudioSessionServerLimitationNotification")
    /// Not in AVAudioSession: the server runs another rate than the preferred one (`sampleRateKey`, `preferredSampleRateKey`).
    public static let sampleRateMismatch = Notification.Name("JackAudioSessionSampleRateMismatchNotification")

    /// `InterruptionType.rawValue`, a UInt.
    public static let interruptionTypeKey = "AVAudioSessionInterruptionTypeKey"
    /// `InterruptionOptions.rawValue`, a UInt; only when the interruption ended.
    public static let interruptionOptionKey = "AVAudioSessionInterruptionOptionKey"
    /// `RouteChangeReason.rawValue`, a UInt.
    public static let routeChangeReasonKey = "AVAudioSessionRouteChangeReasonKey"
    /// The route before the change, a `RouteDescription`.
    public static let routeChangePreviousRouteKey = "AVAudioSessionRouteChangePreviousRouteKey"
    /// `SilenceSecondaryAudioHintType.rawValue`, a UInt.
    public static let silenceSecondaryAudioHintTypeKey = "AVAudioSessionSilenceSecondaryAudioHintTypeKey"

    /// Ours: why the interruption happened, `InterruptionReason.rawValue` (a String).
    public static let interruptionCauseKey = "JackAudioSessionInterruptionCauseKey"
    /// Ours: the multiRoute streams a route change affected ([String]).
    public static let routeChangeStreamsKey = "JackAudioSessionRouteChangeStreamsKey"
    /// Ours: the route after the change, a `RouteDescription`.
    public static let routeChangeCurrentRouteKey = "JackAudioSessionRouteChangeCurrentRouteKey"
    /// Ours: why the server went away, as JACK said it (a String).
    public static let mediaServicesLostReasonKey = "JackAudioSessionMediaServicesLostReasonKey"
    /// Ours: what a reset found, a `MediaServicesReset`.
    public static let mediaServicesResetKey = "JackAudioSessionMediaServicesResetKey"
    /// Ours: xruns since the last notification (Int), since the session opened (Int), how late the last was (µs, Double).
    public static let xrunCountKey = "JackAudioSessionXrunCountKey"
    /// Ours: xruns since the session opened (Int).
    public static let xrunTotalKey = "JackAudioSessionXrunTotalKey"
    /// Ours: how late the last xrun was, microseconds (Double).
    public static let xrunDelayKey = "JackAudioSessionXrunDelayKey"
    /// Ours: the new period, seconds (Double) and frames (Int).
    public static let ioBufferDurationKey = "JackAudioSessionIOBufferDurationKey"
    /// Ours: the new period, frames (Int).
    public static let ioBufferFramesKey = "JackAudioSessionIOBufferFramesKey"
    /// Ours: a `ServerLimitation`.
    public static let limitationKey = "JackAudioSessionLimitationKey"
    /// Ours: the server's rate and the preferred one, Hz (Double).
    public static let sampleRateKey = "JackAudioSessionSampleRateKey"
    /// Ours: the preferred sample rate, Hz (Double).
    public static let preferredSampleRateKey = "JackAudioSessionPreferredSampleRateKey"
}

/// Hands a session's events to NotificationCenter and its AsyncStream, in
/// the order posted, on a serial queue of its own that runs on the queue the
/// app chose (`AudioSession.init`'s `notificationQueue`; default: a queue of
/// the session's): never on the thread that posts (the session's queue), so
/// an observer may call the session back, e.g. `setActive(true)` when an
/// interruption ends.
final class EventHub: Sendable {
    /// The session's one event stream.
    let stream: AsyncStream<AudioSessionEvent>
    private let continuation: AsyncStream<AudioSessionEvent>.Continuation
    private let center: NotificationCenter
    private let delivery: DispatchQueue
    /// The notifications' object: the session, held weakly (set once it exists).
    private let poster = Mutex(WeakPoster())

    private struct WeakPoster {
        weak var session: AudioSession?
    }

    /// Told after each event is delivered: some change no stored state (a period, an xrun count).
    private let propertyWatch: PropertyWatch

    /// `queue`: where observers run (nil: a serial queue of the hub's own).
    init(center: NotificationCenter, queue: DispatchQueue?, propertyWatch: PropertyWatch) {
        self.propertyWatch = propertyWatch
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1024))
        self.center = center
        delivery = DispatchQueue(label: "jackaudiosession.events", target: queue)
    }

    deinit { continuation.finish() }

    /// The object notifications are posted with.
    func post(asObject session: AudioSession) {
        poster.withLock { $0.session = session }
    }

    func post(_ event: AudioSessionEvent) {
        let object = poster.withLock { $0.session }
        // The block holds the hub: an event posted as the session goes is still delivered.
        delivery.async { [self] in
            let (name, info) = Self.notification(for: event)
            center.post(name: name, object: object, userInfo: info)
            continuation.yield(event)
            propertyWatch.stateChanged()
        }
    }

    static func notification(for event: AudioSessionEvent) -> (Notification.Name, [AnyHashable: Any]) {
        typealias N = AudioSessionNotification
        switch event {
        case let .interruption(type, options, reason):
            var info: [AnyHashable: Any] = [N.interruptionTypeKey: type.rawValue, N.interruptionCauseKey: reason.rawValue]
            if type == .ended { info[N.interruptionOptionKey] = options.rawValue }
            return (N.interruption, info)
        case let .routeChange(reason, previousRoute, currentRoute, streams):
            return (N.routeChange, [N.routeChangeReasonKey: reason.rawValue, N.routeChangePreviousRouteKey: previousRoute,
                                    N.routeChangeCurrentRouteKey: currentRoute, N.routeChangeStreamsKey: streams])
        case let .mediaServicesWereLost(reason):
            return (N.mediaServicesWereLost, [N.mediaServicesLostReasonKey: reason])
        case let .mediaServicesWereReset(reset):
            return (N.mediaServicesWereReset, [N.mediaServicesResetKey: reset])
        case let .silenceSecondaryAudioHint(begin):
            let type: SilenceSecondaryAudioHintType = begin ? .begin : .end
            return (N.silenceSecondaryAudioHint, [N.silenceSecondaryAudioHintTypeKey: type.rawValue])
        case let .xrun(count, total, delay, _):
            return (N.xrun, [N.xrunCountKey: count, N.xrunTotalKey: total, N.xrunDelayKey: delay])
        case let .ioBufferDurationChange(seconds, frames):
            return (N.ioBufferDurationChange, [N.ioBufferDurationKey: seconds, N.ioBufferFramesKey: frames])
        case let .serverLimitation(limitation):
            return (N.serverLimitation, [N.limitationKey: limitation])
        case let .sampleRateMismatch(mismatch):
            return (N.sampleRateMismatch, [N.sampleRateKey: mismatch.sampleRate,
                                           N.preferredSampleRateKey: mismatch.preferredSampleRate])
        }
    }
}
