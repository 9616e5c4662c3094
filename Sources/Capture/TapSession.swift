import Foundation
import JackAudioSession
import Synchronization

/// Listening to JACK ports for as long as a take or a meter lasts: what a
/// recorder and a meter share, in one place. It resolves the ports, owns the
/// ring the session's callback fills, activates the tap session (see
/// `PortTap`), knows from which frame the ports are heard, watches the
/// sources (`SourceWatch`, looked at again on every route change), and
/// activates again when an interruption ends, as the seeds' guideline for
/// recording and metering apps says. Its owner hears every event of the
/// session and keeps its own account of them.
public final class TapSession: @unchecked Sendable { // `capture`, `watch` and `events` are set while starting, before any worker reads them
    /// The session listening.
    public let session: AudioSession
    /// The ports listened to, channel order, and the server's rate (set by `resolve`).
    public private(set) var ports: [String] = []
    public private(set) var sampleRate = 0
    /// The ring the callback fills (set by `start`).
    public private(set) var capture: RealtimeCapture?
    /// The JACK frame time from which the ports are connected (see `PortTap.connectedFrom`).
    public private(set) var connectedFrom: UInt32?
    private let clientName: String
    private var watch: SourceWatch?
    private var events: Task<Void, Never>?
    private let ended = Atomic<Bool>(false)

    /// A tap named `clientName` on `serverName` (nil: `$JACK_DEFAULT_SERVER`
    /// or "default"); nothing opens until it resolves its ports.
    public init(clientName: String, serverName: String?) {
        self.clientName = clientName
        session = AudioSession(clientName: clientName, serverName: serverName, recordConsent: .givenByCaller)
    }

    deinit {
        events?.cancel()
        session.close()
    }

    /// Finds the ports `patterns` match (see `PortSelection`) and the server's rate.
    public func resolve(_ patterns: [String], channels: Int?) throws(CaptureError) {
        (ports, sampleRate) = try PortTap.resolve(patterns, channels: channels, serverName: session.serverName,
                                                  clientName: clientName)
    }

    /// Makes the ring (`ringSeconds` of audio; the reader woken every
    /// `wakeReaderEvery` frames), activates the session and waits until the
    /// ports are heard.
    public func start(ringSeconds: Double, wakeReaderEvery: Int = 1) throws(AudioSessionError) -> RealtimeCapture {
        let capture = RealtimeCapture(channels: ports.count, ringSeconds: ringSeconds, sampleRate: sampleRate,
                                      wakeReaderEvery: wakeReaderEvery)
        self.capture = capture
        try PortTap.activate(session, listeningTo: ports, renderBlock: capture.renderBlock)
        connectedFrom = PortTap.connectedFrom(session)
        return capture
    }

    /// Says when listened ports go away and come back (see `SourceWatch`).
    public func watchSources(isWatching: @escaping @Sendable () -> Bool,
                             position: @escaping @Sendable (_ frameTime: UInt32?) -> Int64,
                             onLost: @escaping @Sendable (SourceWatch.Absence) -> Void,
                             onBack: @escaping @Sendable (_ absence: SourceWatch.Absence, _ end: Int64, _ frameTime: UInt32?) -> Void) {
        let watch = SourceWatch(ports: ports, session: session, isWatching: isWatching, position: position,
                                onLost: onLost, onBack: onBack)
        watch.start()
        self.watch = watch
    }

    /// Hands every event of the session to `hear`, in order; looks at the
    /// sources on a route change; activates again when an interruption ends
    /// (a refusal said once through `refused`, the return through `resumed`).
    public func watchEvents(_ hear: @escaping @Sendable (AudioSessionEvent) -> Void,
                            refused: @escaping @Sendable (AudioSessionError) -> Void = { _ in },
                            resumed: @escaping @Sendable (_ attempts: Int) -> Void = { _ in }) {
        let stream = session.events
        events = Task.detached { [weak self] in
            for await event in stream {
                guard let self else { return }
                hear(event)
                switch event {
                case .routeChange: self.watch?.checkSoon()
                case .interruption(.ended, _, _):
                    PortTap.activateAgain(self.session, stopped: { [weak self] in self?.ended.load(ordering: .acquiring) ?? true },
                                          refused: refused, resumed: resumed)
                default: break
                }
            }
        }
    }

    /// Stops listening: no reactivation from now on, the source watch
    /// stops, and not one cycle more reaches the ring (jackd's deactivation
    /// disconnects the ports one by one and runs cycles in between, whose
    /// silence nobody played). Events are still heard until `close`.
    public func stopListening() {
        ended.store(true, ordering: .releasing)
        watch?.stop()
        capture?.accepting.store(false, ordering: .releasing)
        try? session.setActive(false)
    }

    /// Closes the session; its events are heard no more.
    public func close() {
        session.close()
        events?.cancel()
    }
}
