import Foundation
import JackKit
import JackRuntime
import Synchronization

/// What the render block receives every cycle: the JACK port buffers themselves.
public typealias RenderCycle = ProcessCycle

/// An audio session in the shape of AVAudioSession, backed by one JACK client.
///
/// Preferences are requests; the JACK server decides, and the session reports
/// what it actually got. The client is opened on first activation and never
/// starts a server. Events arrive on `events` and through `NotificationCenter`
/// with AVAudioSession's names.
public final class AudioSession: Sendable {
    /// The process-wide session, named after the program, on the default server.
    public static let shared = AudioSession()

    /// `shared`, by the name the seeds' listings call it.
    public static func sharedInstance() -> AudioSession { shared }

    /// The JACK client name the session asks for.
    public let clientName: String
    /// The JACK server the session uses.
    public let serverName: String
    /// The name record permission is stored under.
    public let applicationName: String
    /// Where the session's record permission comes from.
    public let recordConsent: RecordConsent
    /// Where the session finds measured latency corrections (nil: none applied).
    public let latencyCalibration: LatencyCalibrationStore?

    /// The session's state and decisions, on its own serial queue.
    let core: QueueBound<SessionCore>
    /// What getters read without waiting for the queue, and the counters JACK's threads touch.
    let board = SessionBoard()
    let hub: EventHub

    /// A session that will open a JACK client named `clientName` on the server
    /// `serverName` (nil: `$JACK_DEFAULT_SERVER` or "default"), posting its
    /// notifications on `notificationCenter` with itself as the object,
    /// applying the latency corrections of `latencyCalibration` for the
    /// hardware ports it connects to.
    ///
    /// Observers and the `events` stream are served in the order events
    /// happen, never on the thread that calls the session. `notificationQueue`
    /// chooses where observers run: `.main` delivers on the main thread as
    /// AVAudioSession does (the app must then run the main queue: a run loop,
    /// `dispatchMain()`, or an `async` main); nil, the default, a serial queue
    /// of the session's own, which a headless tool without a main loop needs.
    public init(clientName: String = ProcessInfo.processInfo.processName, serverName: String? = nil,
                applicationName: String? = nil, recordConsent: RecordConsent = .stored(RecordPermissionStore()),
                latencyCalibration: LatencyCalibrationStore? = LatencyCalibrationStore(),
                notificationCenter: NotificationCenter = .default, notificationQueue: DispatchQueue? = nil) {
        self.clientName = clientName
        self.serverName = serverName ?? Client.defaultServerName
        self.applicationName = applicationName ?? clientName
        self.recordConsent = recordConsent
        self.latencyCalibration = latencyCalibration
        hub = EventHub(center: notificationCenter, queue: notificationQueue, propertyWatch: board.propertyWatch)
        let (name, application, hub, board) = (self.serverName, self.applicationName, hub, board)
        // The core is made on its own queue, as everything it owns is touched there only.
        self.core = QueueBound.make(on: DispatchQueue(label: "jackaudiosession.session.\(clientName)")) {
            SessionCore(clientName: clientName, serverName: name, applicationName: application, recordConsent: recordConsent,
                        latencyCalibration: latencyCalibration, hub: hub, board: board)
        }
        self.core.sync { $0.session = self }
        hub.post(asObject: self)
    }

    /// A session released without `close()` closes: at once, or, when the
    /// last reference went on the session's own queue, as the queue's next job.
    deinit {
        let core = core
        if core.isOnQueue {
            core.queue.asyncAfter(deadline: .now() + core.value.lingerRemaining) {
                guard let client = core.value.close() else { return }
                Thread.detachNewThread { client.close() }
            }
        } else {
            Self.close(core)
        }
    }

    /// Every event of this session, in order: interruptions, route changes,
    /// media-services loss and reset, xruns, period changes. One consumer.
    public var events: AsyncStream<AudioSessionEvent> { hub.stream }

    // MARK: Category, mode, options

    /// The session's category; soloAmbient until set.
    public var category: Category { board.read { $0.preferences.category } }

    /// The session's mode; default until set.
    public var mode: Mode { board.read { $0.preferences.mode } }

    /// The options in force, side effects of the mode included.
    public var categoryOptions: CategoryOptions { board.read { $0.preferences.options } }

    /// Whether the session mixes with other sessions instead of interrupting them.
    public var isMixable: Bool {
        board.read { CategoryRules.isMixable($0.preferences.category, options: $0.preferences.options) }
    }

    /// Sets category, mode and options (`incompatibleCategory` for a mode the
    /// category does not allow, `badParam` for such an option). While active
    /// it takes effect at once: the ports are rebuilt for the new category and
    /// a route change with reason `categoryChange` is posted.
    public func setCategory(_ category: Category, mode: Mode = .default, options: CategoryOptions = [])
        throws(AudioSessionError) {
        let resolved = try CategoryRules.resolve(category, mode: mode, options: options)
        try complete(core.sync { core throws(AudioSessionError) in
            try core.setCategory(category, mode: mode, options: resolved)
        })
    }

    /// Sets the mode, keeping the category and its options as they are now
    /// (AVAudioSession's `setMode(_:)`): `incompatibleCategory` for a mode the
    /// category does not allow. The options a voiceChat or videoChat mode
    /// implies (allowBluetooth, defaultToSpeaker) are added, and stay when the
    /// mode changes again, as options the session holds.
    public func setMode(_ mode: Mode) throws(AudioSessionError) {
        let (category, options) = board.read { ($0.preferences.category, $0.preferences.options) }
        try setCategory(category, mode: mode, options: options)
    }

    // MARK: Render

    /// Sets the block that runs on JACK's real-time thread every cycle with the
    /// session's port buffers. Takes effect at the next activation.
    public func setRenderBlock(_ block: @escaping RenderBlock) {
        core.sync { $0.renderBlock = block }
    }

    /// Removes the render block: the outputs are silent from the next activation.
    public func removeRenderBlock() {
        setRenderBlock(renderSilence)
    }

    /// Records how long each process cycle takes (for benchmarks). Takes
    /// effect at the next activation.
    public func setCycleCostRecorder(_ recorder: CycleCostRecorder?) {
        core.sync { $0.cycleCostRecorder = recorder }
    }

    // MARK: Audio objects

    /// Attaches a player, recorder or meter: while it runs, deactivation fails with `isBusy`.
    public func attach(_ object: any AudioObject) {
        board.attach(object)
    }

    /// Detaches an audio object.
    public func detach(_ object: any AudioObject) {
        board.detach(object)
    }

    // MARK: State

    /// Whether the session is active.
    public var isActive: Bool { board.read { $0.machine.isActive } }

    /// Xruns the server reported since the session opened its client.
    public var xrunCount: Int { board.xruns.load(ordering: .relaxed) }

    /// Times the session has read the other sessions of its server and acted
    /// on them (interrupted, ducked, hinted, published itself). One that began
    /// after a change has seen it: wait for two more than before the change to
    /// know that nothing it should have done was left undone.
    public var arbitrationsCompleted: Int { board.arbitrationsCompleted.load(ordering: .acquiring) }

    /// Attempts to reach the server again after losses, since the session
    /// was made: each is one look at the server (an open, or a pause while
    /// it is away) before the backoff's next pause. How often a session
    /// tries while its server is gone is read from this, not from a time.
    public var reconnectAttempts: Int { board.reconnectAttempts.load(ordering: .acquiring) }

    /// Reconnect loops that have ended since the session was made: the
    /// server answered, the session closed, a later loss took over, the
    /// limit passed or libjack wedged. A close ends a loop at once, even in
    /// the middle of its pause.
    public var reconnectsEnded: Int { board.reconnectsEnded.load(ordering: .acquiring) }

    /// Interruptions that have silenced the session since it opened, counted
    /// before the silence begins: a run of audio whose count moved while it
    /// ran may hold silence in place of the session's output.
    public var interruptionsBegun: Int { board.interruptionsBegun.load(ordering: .acquiring) }

    /// Process cycles completed in the current activation.
    public var cyclesCompleted: UInt64 {
        board.read { $0.activation.processor }?.cyclesCompleted ?? 0
    }

    /// Changes of JACK's graph the session's client was told of: ports or
    /// clients registered or gone, connections made or broken. What the
    /// client's port lookups answer can change only after it moves (or when
    /// `client` is another client), so a watch of ports can look again only then.
    public var graphChangeCount: Int { board.graphChanges.load(ordering: .acquiring) }

    /// The session's JACK client, once opened (for tools that need the raw client).
    public var client: Client? { openClient }

    /// Waits, off the real-time thread, until `condition` holds: it is looked
    /// at now and at the end of every cycle the active session runs, for at
    /// most `seconds` (what a cycle boundary changes, such as the graph jackd
    /// runs, is seen within a period, without polling). With no session
    /// running, it is looked at once. Whether it held.
    @discardableResult
    public func awaitCycles(within seconds: Double, until condition: () -> Bool) -> Bool {
        guard let processor = board.read({ $0.activation.processor }) else { return condition() }
        return processor.awaitCycles(within: seconds, until: condition)
    }

    var openClient: Client? { board.read { $0.activation.client } }

    var activeClient: Client? { board.read { $0.machine.isActive ? $0.activation.client : nil } }

    /// What the session does when the server comes back: reactivate at once
    /// (automatic, the default) or leave it to the app (manual).
    public var resetPolicy: ResetPolicy {
        get { board.resetSettings.withLock { $0.policy } }
        set { board.resetSettings.withLock { $0.policy = newValue } }
    }

    /// How long to keep trying to reach a lost server, seconds (nil: as long as the session lives).
    public var reconnectLimit: Double? {
        get { board.resetSettings.withLock { $0.limit } }
        set { board.resetSettings.withLock { $0.limit = newValue } }
    }

    /// Deactivates and closes the JACK client, and stops any reconnecting.
    /// The session can be activated again.
    public func close() {
        Self.close(core)
    }

    /// Closes off the queue: the core closes on its queue once the linger
    /// after a deactivation is over (a timer on the queue, which serves the
    /// arbitration meanwhile), and the client's close waits here for
    /// libjack's notification thread.
    private static func close(_ core: QueueBound<SessionCore>) {
        let linger = core.sync { $0.lingerRemaining }
        guard linger > 0 else {
            core.sync { $0.close() }?.close()
            return
        }
        let closed = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var client: Client?
        core.queue.asyncAfter(deadline: .now() + linger) {
            client = core.value.close()
            closed.signal()
        }
        closed.wait()
        client?.close()
    }
}
