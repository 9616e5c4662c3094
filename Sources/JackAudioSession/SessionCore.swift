import Foundation
import JackKit
import JackRuntime

/// A session's mutable state and every decision about it, owned by one
/// serial queue: `AudioSession` reaches it only through a `QueueBound`, so
/// each entry checks that it runs there. No lock guards it, and none is
/// needed to call one part from another (an activation that arbitrates, an
/// interruption that deactivates). JACK's callbacks, timers and the
/// reconnect thread send it work on the queue; that work holds the session
/// weakly. Its events go out through `hub`, which delivers them on its own
/// queue, so an app may call the session from an event handler.
///
/// The concerns are extensions, one file each: activation
/// (`SessionCore+Activation`), routes (`+Routes`), the arbitration between
/// processes (`+Arbitration`), the server's loss and return (`+Recovery`),
/// and libjack's notifications (`+Notifications`). The rules they apply
/// are pure types beside them (`CategoryRules`, `RoutePlanner`, `Arbitration`).
final class SessionCore {
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
        /// The data source chosen per input device (uid → data source name).
        var inputDataSources: [String: String] = [:]
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
        var catalog = DeviceCatalog.empty
        var history = DeviceHistory(catalog: .empty)
        var plan = RoutePlan.none
    }

    let clientName: String
    let serverName: String
    let applicationName: String
    let recordConsent: RecordConsent
    let latencyCalibration: LatencyCalibrationStore?
    /// This session's file in its server's registry.
    let registryEntry: RegistryEntry
    let hub: EventHub
    let board: SessionBoard
    /// The session, for scheduling work on its queue (weakly: a session
    /// released without `close()` stops its timers and reconnecting).
    weak var session: AudioSession?

    /// The session's phase and what moves it (`SessionMachine`): every
    /// decision about activation, loss, reset and interruption is the
    /// machine's; the core carries out what it returns. The reconnect thread
    /// reads its generation from the board.
    var machine = SessionMachine() {
        didSet {
            board.store { [machine] in $0.machine = machine }
            board.reconnectGeneration.store(machine.generation, ordering: .relaxed)
            if machine.generation != oldValue.generation { board.reconnectWatch.withLock { $0 }?.interrupt() }
            // The machine says while the others are watched; the timer and the registry watch follow.
            if machine.watchesOthers != (arbitrationTimer != nil) {
                if machine.watchesOthers { startArbitrationTimer() } else { stopArbitrationTimer() }
            }
        }
    }
    var preferences = Preferences() {
        didSet { board.store { [preferences] in $0.preferences = preferences } }
    }
    var activation = Activation() {
        didSet { board.store { [activation] in $0.activation = activation } }
    }
    /// This session's part in the arbitration between processes.
    var arbitration = ArbitrationState() {
        didSet { board.store { [arbitration] in $0.arbitration = arbitration } }
    }
    /// What the server lacks, each said once (`serverLimitation`) when a client found it.
    var limitationsSaid: [ServerLimitation] = [] {
        didSet { board.store { [limitationsSaid] in $0.limitations = limitationsSaid } }
    }
    /// The preferred rate the server does not run, as last said (`sampleRateMismatch`).
    var sampleRateMismatch: SampleRateMismatch? {
        didSet { board.store { [sampleRateMismatch] in $0.sampleRateMismatch = sampleRateMismatch } }
    }
    var arbitrationTimer: DispatchSourceTimer?
    /// The arbitration timer's ticks since it started (every 20th runs a full arbitration).
    var timerTicks = 0
    var registryWatch: RegistryWatch?
    /// Not an Optional: a closure stored in one is reabstracted, and every
    /// real-time call would go through thunks.
    var renderBlock: RenderBlock = renderSilence
    var cycleCostRecorder: CycleCostRecorder?
    /// Xruns already posted (the board counts them as they come).
    var xrunsReported = 0
    /// Set once a registry that could not be written was reported.
    var registryFailureReported = false
    /// Who `requestRecordPermission` asks when nothing is decided.
    var recordPermissionPrompt: RecordPermissionPrompt?

    init(clientName: String, serverName: String, applicationName: String, recordConsent: RecordConsent,
         latencyCalibration: LatencyCalibrationStore?, hub: EventHub, board: SessionBoard) {
        self.clientName = clientName
        self.serverName = serverName
        self.applicationName = applicationName
        self.recordConsent = recordConsent
        self.latencyCalibration = latencyCalibration
        self.hub = hub
        self.board = board
        registryEntry = RegistryEntry(registry: SessionRegistry(serverName: serverName))
    }

    var isActive: Bool { machine.isActive }

    var openClient: Client? { activation.client }

    var activeClient: Client? { isActive ? activation.client : nil }

    /// The decision for this application: the stored one, or granted when the caller gave consent.
    var recordPermission: RecordPermission {
        switch recordConsent {
        case let .stored(store): store.permission(for: applicationName)
        case .givenByCaller: .granted
        }
    }

    /// Whether the input must be silence: a category with input, and record permission not granted.
    var silencesInputForPermission: Bool { preferences.category.hasInput && recordPermission != .granted }

    /// Deactivates, forgets the client and withdraws the session's file,
    /// and stops any reconnecting; returns the client for the caller to
    /// close off the queue (a close waits for libjack's notification thread).
    func close() -> Client? {
        let client = activation.client
        activation = Activation()
        machine.close()
        forgetPublishedState()
        registryEntry.withdraw()
        return client
    }

    /// Carries out what the machine decided. `dead`: the client a loss let
    /// go of, closed by the reconnect off the queue (`mediaServicesLost`).
    func perform(_ effects: [SessionMachine.Effect], lettingGoOf dead: Client? = nil) {
        for effect in effects {
            switch effect {
            case let .post(event):
                hub.post(event)
            case .postFirstRoute:
                hub.post(.routeChange(reason: .categoryChange, previousRoute: .empty, currentRoute: activation.plan.route,
                                      streams: []))
            case .withdrawAnnouncement:
                if let client = openClient { publishState(on: client) }
            case let .reconnect(loss):
                guard let dead else { break }
                if let session {
                    ReconnectLoop.start(for: session, after: dead, loss)
                } else {
                    // Released without close(): nothing reconnects, and the dead client is closed off the queue.
                    Thread.detachNewThread { dead.close() }
                }
            case .refreshRoute:
                session?.scheduleRouteRefresh()
            case .silenceForInterruption:
                silenceForInterruption()
            }
        }
    }
}
