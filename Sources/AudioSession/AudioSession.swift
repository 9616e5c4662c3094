import Foundation
import JackKit
import Synchronization

/// What the render block receives every cycle: the JACK port buffers themselves.
public typealias RenderCycle = ProcessCycle

/// An audio session in the shape of AVAudioSession, backed by one JACK client.
///
/// Preferences are requests; the JACK server decides, and the session reports
/// what it actually got. The client is opened on first activation and never
/// starts a server. Events arrive on `events` and through `NotificationCenter`
/// with AVAudioSession's names.
public final class AudioSession: @unchecked Sendable { // its state is behind the `preferences` and `activation` mutexes, the `transition` lock and atomics (issue 20 gives it one queue)
    /// The process-wide session, named after the program, on the default server.
    public static let shared = AudioSession()

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

    struct Preferences {
        var category: Category = .soloAmbient
        var mode: Mode = .default
        var options: CategoryOptions = []
        var ioBufferDuration: Double?
        var sampleRate: Double?
        var inputChannels: Int?
        var outputChannels: Int?
        var inputPortNames: [String] = []
        var outputPortNames: [String] = []
        var preferredInput: String?
        var outputOverride: PortOverride = .none
        /// Output streams, used under multiRoute.
        var streams: [AudioOutputStream] = []
    }

    struct Activation {
        var client: Client?
        var ports: SessionPorts?
        /// Ports kept registered on `client` while the session is inactive
        /// (PipeWire's libjack only: see `keepsPortsWhileInactive`).
        var idlePorts: [JackKit.Port] = []
        var processor: RealtimeProcessor?
        var isActive = false
        var catalog = DeviceCatalog.empty
        var history = DeviceHistory(catalog: .empty)
        var plan = RoutePlan.none
        var hasBeenActive = false
    }

    let preferences = Mutex(Preferences())
    let activation = Mutex(Activation())
    /// Serialises activation, deactivation, reconfiguration and close; JACK
    /// callbacks never take it (they hand work to `worker`).
    let transition = NSRecursiveLock()
    /// Where JACK notifications are turned into route changes and events.
    let worker = DispatchQueue(label: "jackaudiosession.session")
    let latencyPasses = Atomic<Int>(0)
    let xruns = Atomic<Int>(0)
    let xrunsReported = Atomic<Int>(0)
    /// The period last reported in an ioBufferDurationChange, frames.
    let lastPeriod = Atomic<Int>(0)
    /// The server's sample rate when last seen, Hz.
    let lastSampleRate = Atomic<Int>(0)
    /// Bumped by each loss and by close: a reconnect loop of an older generation stops.
    let reconnectGeneration = Atomic<Int>(0)
    /// Set once the session has said that libjack is wedged.
    let wedgeReported = Atomic<Bool>(false)
    private let resetSettings = Mutex<(policy: ResetPolicy, limit: Double?)>((.automatic, nil))
    /// This session's part in the arbitration between processes.
    let arbitration = Mutex(ArbitrationState())
    /// Guarded by `transition`.
    nonisolated(unsafe) var arbitrationTimer: DispatchSourceTimer?
    /// Guarded by `transition`.
    nonisolated(unsafe) var registryWatch: RegistryWatch?
    /// This session's file in its server's registry.
    let registryEntry: RegistryEntry
    let arbitrationScheduled = Atomic<Bool>(false)
    /// Set once a registry that could not be written was reported.
    let registryFailureReported = Atomic<Bool>(false)
    /// Bumped by every port or client registration; a refresh runs once it settles.
    let registrationGeneration = Atomic<Int>(0)
    let hub: EventHub
    /// What the server lacks, each said once (`serverLimitation`) when a client found it.
    let limitationsSaid = Mutex<[ServerLimitation]>([])
    /// Guarded by `transition`. Not an Optional: a closure stored in one is
    /// reabstracted, and every real-time call would go through thunks.
    nonisolated(unsafe) var renderBlock: RenderBlock = renderSilence
    /// Guarded by `transition`.
    nonisolated(unsafe) var cycleCostRecorder: CycleCostRecorder?
    private let audioObjects = Mutex<[ObjectIdentifier: any AudioObject]>([:])

    /// A session that will open a JACK client named `clientName` on the server
    /// `serverName` (nil: `$JACK_DEFAULT_SERVER` or "default"), posting its
    /// notifications on `notificationCenter`, applying the latency corrections
    /// of `latencyCalibration` for the hardware ports it connects to.
    public init(clientName: String = ProcessInfo.processInfo.processName, serverName: String? = nil,
                applicationName: String? = nil, recordConsent: RecordConsent = .stored(RecordPermissionStore()),
                latencyCalibration: LatencyCalibrationStore? = LatencyCalibrationStore(),
                notificationCenter: NotificationCenter = .default) {
        self.clientName = clientName
        self.serverName = serverName ?? Client.defaultServerName
        self.applicationName = applicationName ?? clientName
        self.recordConsent = recordConsent
        self.latencyCalibration = latencyCalibration
        registryEntry = RegistryEntry(registry: SessionRegistry(serverName: self.serverName))
        hub = EventHub(center: notificationCenter)
    }

    deinit { close() }

    /// Every event of this session, in order: interruptions, route changes,
    /// media-services loss and reset, xruns, period changes. One consumer.
    public var events: AsyncStream<AudioSessionEvent> { hub.stream }

    // MARK: Category, mode, options

    /// The session's category; soloAmbient until set.
    public var category: Category { preferences.withLock { $0.category } }

    /// The session's mode; default until set.
    public var mode: Mode { preferences.withLock { $0.mode } }

    /// The options in force, side effects of the mode included.
    public var categoryOptions: CategoryOptions { preferences.withLock { $0.options } }

    /// Whether the session mixes with other sessions instead of interrupting them.
    public var isMixable: Bool {
        preferences.withLock { CategoryRules.isMixable($0.category, options: $0.options) }
    }

    /// Sets category, mode and options (`incompatibleCategory` for a mode the
    /// category does not allow, `badParam` for such an option). While active
    /// it takes effect at once: the ports are rebuilt for the new category and
    /// a route change with reason `categoryChange` is posted.
    public func setCategory(_ category: Category, mode: Mode = .default, options: CategoryOptions = [])
        throws(AudioSessionError) {
        let resolved = try CategoryRules.resolve(category, mode: mode, options: options)
        transition.lock()
        defer { transition.unlock() }
        preferences.withLock {
            $0.category = category
            $0.mode = mode
            $0.options = resolved
            if !category.hasOutput || category != .playAndRecord { $0.outputOverride = .none }
        }
        guard isActive else { return }
        let previous = currentRoute
        try deactivateLocked(checkBusy: false)
        try activateLocked(postFirstCategoryChange: false)
        hub.post(.routeChange(reason: .categoryChange, previousRoute: previous, currentRoute: currentRoute, streams: []))
    }

    // MARK: Render

    /// Sets the block that runs on JACK's real-time thread every cycle with the
    /// session's port buffers. Takes effect at the next activation.
    public func setRenderBlock(_ block: @escaping RenderBlock) {
        transition.lock()
        defer { transition.unlock() }
        renderBlock = block
    }

    /// Removes the render block: the outputs are silent from the next activation.
    public func removeRenderBlock() {
        setRenderBlock(renderSilence)
    }

    /// Records how long each process cycle takes (for benchmarks). Takes
    /// effect at the next activation.
    public func setCycleCostRecorder(_ recorder: CycleCostRecorder?) {
        transition.lock()
        defer { transition.unlock() }
        cycleCostRecorder = recorder
    }

    // MARK: Audio objects

    /// Attaches a player, recorder or meter: while it runs, deactivation fails with `isBusy`.
    public func attach(_ object: any AudioObject) {
        audioObjects.withLock { $0[ObjectIdentifier(object)] = object }
    }

    /// Detaches an audio object.
    public func detach(_ object: any AudioObject) {
        audioObjects.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(object)) }
    }

    /// Whether any attached audio object is running.
    var hasRunningAudioObject: Bool { audioObjects.withLock { $0.values.contains { $0.isRunning } } }

    // MARK: State

    /// Whether the session is active.
    public var isActive: Bool { activation.withLock { $0.isActive } }

    /// Xruns the server reported since the session opened its client.
    public var xrunCount: Int { xruns.load(ordering: .relaxed) }

    /// Process cycles completed in the current activation.
    public var cyclesCompleted: UInt64 {
        activation.withLock { $0.processor?.cyclesCompleted } ?? 0
    }

    /// The session's JACK client, once opened (for tools that need the raw client).
    public var client: Client? { openClient }

    var openClient: Client? { activation.withLock { $0.client } }

    var activeClient: Client? { activation.withLock { $0.isActive ? $0.client : nil } }

    /// What the session does when the server comes back: reactivate at once
    /// (automatic, the default) or leave it to the app (manual).
    public var resetPolicy: ResetPolicy {
        get { resetSettings.withLock { $0.policy } }
        set { resetSettings.withLock { $0.policy = newValue } }
    }

    /// How long to keep trying to reach a lost server, seconds (nil: as long as the session lives).
    public var reconnectLimit: Double? {
        get { resetSettings.withLock { $0.limit } }
        set { resetSettings.withLock { $0.limit = newValue } }
    }

    /// Deactivates and closes the JACK client, and stops any reconnecting.
    /// The session can be activated again.
    public func close() {
        reconnectGeneration.add(1, ordering: .relaxed)
        transition.lock()
        stopArbitrationTimer()
        lingerAfterDeactivation()
        let client = activation.withLock { state -> Client? in
            let client = state.client
            state = Activation()
            return client
        }
        forgetPublishedState()
        registryEntry.withdraw()
        transition.unlock()
        // Outside the session lock: a close waits for libjack's notification thread.
        client?.close()
    }
}
