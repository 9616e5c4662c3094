import JackKit
import Synchronization
import JackRuntime

/// What a session shares outside its queue: the copy of the core's state
/// that getters read without waiting for the queue (the core writes it after
/// every change), and the counters JACK's threads and the reconnect thread
/// touch. Nothing here decides anything; the core does.
final class SessionBoard: Sendable {
    /// The core's state as of its last change.
    struct Snapshot {
        var machine = SessionMachine()
        var preferences = SessionCore.Preferences()
        var activation = SessionCore.Activation()
        var arbitration = SessionCore.ArbitrationState()
        var limitations: [ServerLimitation] = []
        var sampleRateMismatch: SampleRateMismatch?
    }

    let snapshot = Mutex(Snapshot())
    /// Passes of the session's latency callback (playback), so an activation can wait for one.
    let latencyPasses = Atomic<Int>(0)
    let xruns = Atomic<Int>(0)
    /// The cycle frame time at the first xrun not yet reported, with bit 32
    /// set (0: none): set on the notification thread when the xrun comes,
    /// taken by the report up to 250 ms later.
    let firstUnreportedXrunFrame = Atomic<UInt64>(0)
    /// The period last reported in an ioBufferDurationChange, frames.
    let lastPeriod = Atomic<Int>(0)
    /// The server's sample rate when last seen, Hz.
    let lastSampleRate = Atomic<Int>(0)
    /// The machine's reconnect generation, as of its last change: a reconnect loop of an older one stops.
    let reconnectGeneration = Atomic<Int>(0)
    /// The running reconnect loop's watch, interrupted when the generation
    /// moves on, so the loop stops at once rather than after its pause.
    let reconnectWatch = Mutex<ServerWatch?>(nil)
    /// Bumped by every registration or connection JACK reports (`graphChangeCount`).
    let graphChanges = Atomic<Int>(0)
    /// Bumped by every port or client registration; a refresh runs once it settles.
    let registrationGeneration = Atomic<Int>(0)
    /// When the oldest registration not yet refreshed for came (monotonic ns; 0: none).
    let refreshPendingSince = Atomic<UInt64>(0)
    /// Set while an arbitration is queued, so a burst of requests runs it once.
    let arbitrationScheduled = Atomic<Bool>(false)
    /// Arbitrations that read the registry and acted on it, so that whoever
    /// must know a change was seen (a test that something did not happen)
    /// waits for this to move instead of for a time.
    let arbitrationsCompleted = Atomic<Int>(0)
    /// Interruptions that silenced the session, counted before the silence.
    let interruptionsBegun = Atomic<Int>(0)
    /// Attempts to reach the server again after a loss, each before its pause.
    let reconnectAttempts = Atomic<Int>(0)
    /// Reconnect loops that have ended (`AudioSession.reconnectsEnded`).
    let reconnectsEnded = Atomic<Int>(0)
    /// What was seen of the server when the session's client last opened.
    let serverPresence = Mutex(ServerPresence())
    let resetSettings = Mutex<(policy: ResetPolicy, limit: Double?)>((.automatic, nil))
    private let audioObjects = Mutex<[ObjectIdentifier: any AudioObject]>([:])

    func read<T>(_ body: (Snapshot) -> T) -> T { snapshot.withLock { body($0) } }

    /// The streams of property values, checked after every change.
    let propertyWatch = PropertyWatch()

    /// Changes the snapshot (the core's queue does, after each change of its state).
    func store(_ body: (inout Snapshot) -> Void) {
        snapshot.withLock { body(&$0) }
        propertyWatch.stateChanged()
    }

    func attach(_ object: any AudioObject) { audioObjects.withLock { $0[ObjectIdentifier(object)] = object } }

    func detach(_ object: any AudioObject) { audioObjects.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(object)) } }

    /// Whether any attached audio object is running.
    var hasRunningAudioObject: Bool { audioObjects.withLock { Array($0.values) }.contains { $0.isRunning } }
}
