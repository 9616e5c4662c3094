import Foundation

/// Whether an interruption began or ended.
public enum InterruptionType: String, Sendable, Codable {
    case began, ended
}

/// Why an interruption happened.
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
    /// since the session opened, and how late the last one was, microseconds.
    case xrun(count: Int, total: Int, delayMicroseconds: Double)
    /// The server's period changed (by this session or any other client).
    case ioBufferDurationChange(seconds: Double, frames: Int)
    /// The server cannot do something jackd2 does (said once per session,
    /// when its client first finds it): what is missing, what it costs, and
    /// the configuration that adds it.
    case serverLimitation(ServerLimitation)
}

/// AVAudioSession's notification names and userInfo keys, for code written
/// against AVAudioSession.
public enum AudioSessionNotification {
    public static let interruption = Notification.Name("AVAudioSessionInterruptionNotification")
    public static let routeChange = Notification.Name("AVAudioSessionRouteChangeNotification")
    public static let mediaServicesWereLost = Notification.Name("AVAudioSessionMediaServicesWereLostNotification")
    public static let mediaServicesWereReset = Notification.Name("AVAudioSessionMediaServicesWereResetNotification")
    public static let silenceSecondaryAudioHint = Notification.Name("AVAudioSessionSilenceSecondaryAudioHintNotification")
    /// Not in AVAudioSession: JACK xruns.
    public static let xrun = Notification.Name("JackAudioSessionXrunNotification")
    /// Not in AVAudioSession: the period changed.
    public static let ioBufferDurationChange = Notification.Name("JackAudioSessionIOBufferDurationChangeNotification")
    /// Not in AVAudioSession: the server lacks something jackd2 has (userInfo "limitation": ServerLimitation).
    public static let serverLimitation = Notification.Name("JackAudioSessionServerLimitationNotification")

    public static let interruptionTypeKey = "AVAudioSessionInterruptionTypeKey"
    public static let interruptionOptionKey = "AVAudioSessionInterruptionOptionKey"
    public static let interruptionReasonKey = "AVAudioSessionInterruptionReasonKey"
    public static let routeChangeReasonKey = "AVAudioSessionRouteChangeReasonKey"
    public static let routeChangePreviousRouteKey = "AVAudioSessionRouteChangePreviousRouteKey"
    public static let silenceSecondaryAudioHintTypeKey = "AVAudioSessionSilenceSecondaryAudioHintTypeKey"
    /// Not in AVAudioSession: the multiRoute streams a route change affected ([String]).
    public static let routeChangeStreamsKey = "JackAudioSessionRouteChangeStreamsKey"
}

/// Hands a session's events to NotificationCenter and its AsyncStream, in
/// the order posted, on a queue of its own: never on the thread that posts
/// (the session's queue), so an observer may call the session back, e.g.
/// `setActive(true)` when an interruption ends.
final class EventHub: Sendable {
    /// The session's one event stream.
    let stream: AsyncStream<AudioSessionEvent>
    private let continuation: AsyncStream<AudioSessionEvent>.Continuation
    private let center: NotificationCenter
    private let delivery = DispatchQueue(label: "jackaudiosession.events")

    init(center: NotificationCenter) {
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1024))
        self.center = center
    }

    deinit { continuation.finish() }

    func post(_ event: AudioSessionEvent) {
        // The block holds the hub: an event posted as the session goes is still delivered.
        delivery.async { [self] in
            let (name, info) = Self.notification(for: event)
            center.post(name: name, object: nil, userInfo: info)
            continuation.yield(event)
        }
    }

    static func notification(for event: AudioSessionEvent) -> (Notification.Name, [AnyHashable: Any]) {
        typealias N = AudioSessionNotification
        switch event {
        case let .interruption(type, options, reason):
            return (N.interruption, [N.interruptionTypeKey: type.rawValue, N.interruptionOptionKey: options.rawValue,
                                     N.interruptionReasonKey: reason.rawValue])
        case let .routeChange(reason, previousRoute, _, streams):
            return (N.routeChange, [N.routeChangeReasonKey: reason.rawValue, N.routeChangePreviousRouteKey: previousRoute,
                                    N.routeChangeStreamsKey: streams])
        case .mediaServicesWereLost:
            return (N.mediaServicesWereLost, [:])
        case let .mediaServicesWereReset(reset):
            return (N.mediaServicesWereReset, ["reset": reset])
        case let .silenceSecondaryAudioHint(begin):
            return (N.silenceSecondaryAudioHint, [N.silenceSecondaryAudioHintTypeKey: begin ? 1 : 0])
        case let .xrun(count, total, delay):
            return (N.xrun, ["count": count, "total": total, "delayMicroseconds": delay])
        case let .ioBufferDurationChange(seconds, frames):
            return (N.ioBufferDurationChange, ["seconds": seconds, "frames": frames])
        case let .serverLimitation(limitation):
            return (N.serverLimitation, ["limitation": limitation])
        }
    }
}
