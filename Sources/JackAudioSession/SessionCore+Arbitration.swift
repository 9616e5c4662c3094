import Foundation
import JackKit
import JackRuntime

/// The arbitration between sessions in different processes: what this
/// session publishes in the server's registry, and what it does about what
/// the others publish (interrupted, ducked, the secondary-audio hint).
extension SessionCore {
    /// What the driver keeps for the arbitration: the app's settings and
    /// caches of what was published and read. No decision: the session's
    /// sound (its order, heard, ducking) is the machine's `Audibility`.
    struct ArbitrationState {
        var priority: AudioSession.Priority = .ordinary
        var duckLevelDB: Double = -20
        /// nil: ducking lasts until deactivation, as the seeds say; else it
        /// ends after this many seconds of silence (ours).
        var duckReleaseHold: Double?
        /// The value last written to the server.
        var published: String?
        /// Refused values already reported (reported once each).
        var refusalsReported: Set<String> = []
        /// Client UUIDs of other sessions found on the server, with their
        /// names: asked of jackd once each, forgotten when a client of that
        /// name leaves and when this session gets a new client. (Asking on
        /// every arbitration cost ~14 ms right after a kill, while jackd
        /// was busy removing the dead client.)
        var clientsOnServer: [UInt64: String] = [:]
    }

    /// nil when the registry could not be read.
    func publishedSessions(using client: Client) -> [PublishedSession]? {
        let isOnServer = { (uuid: UInt64, name: String) -> Bool in
            if self.arbitration.clientsOnServer[uuid] == name { return true }
            guard client.clientName(ofUUID: uuid) == name else { return false }
            self.arbitration.clientsOnServer[uuid] = name
            return true
        }
        return SessionDirectory.sessions(in: registryEntry.registry, onServer: isOnServer) { file, refusal in
            let key = "\(file):\(refusal)"
            guard self.arbitration.refusalsReported.insert(key).inserted else { return }
            let line = "jackaudiosession: ignoring the session state in \(registryEntry.registry.directory)/\(file): "
                + "\(refusal)\n"
            _ = try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
        }
    }

    // MARK: Activation hooks

    /// Refuses a non-mixable activation while another process's non-mixable call is active.
    func checkActivationAllowed(on client: Client) throws(AudioSessionError) {
        let others = publishedSessions(using: client) ?? []
        let mixable = CategoryRules.isMixable(preferences.category, options: preferences.options)
        if let call = Arbitration.blockingCall(for: client.uuid, isMixable: mixable, among: others) {
            throw AudioSessionError(.insufficientPriority, "the call-class session '\(call.state.client)' is active on "
                                        + "server '\(serverName)'; a session that does not mix cannot activate until it "
                                        + "ends (one with mixWithOthers can)")
        }
    }

    /// Before an activation connects its ports: publishes the session as
    /// active with its place in the activation order (JACK microseconds at
    /// the request), so the sessions it interrupts are silenced while its own
    /// audio starts rather than one notification later.
    func announceActivation(_ attempt: SessionMachine.Attempt, order: UInt64, on client: Client) {
        machine.announced(attempt.number, order: order, at: .now)
        publishState(on: client)
    }

    /// After an activation: ducking starts at once, and the state is published.
    func didActivate(processor: RealtimeProcessor) {
        watchLevel(of: processor, othersRegistered: true)
        arbitrate()
    }

    /// After the app's deactivation: published, so those waiting on this session see it.
    func didDeactivate(notifyingOthers: Bool) {
        machine.appDeactivated(notifyingOthers: notifyingOthers, at: .now)
        arbitrate()
    }

    /// A closed session's file is withdrawn, and a session that vanishes
    /// looks like one that crashed (whose interruptions end with
    /// shouldResume). So a close right after a deactivation waits (off the
    /// queue) until 0.3 s have passed since it, long enough for the other
    /// sessions to read whether it deactivated with notifyOthersOnDeactivation
    /// (they are woken by the registry at once, or poll every 100 ms without
    /// inotify). Seconds left to wait.
    var lingerRemaining: Double { machine.audibility.lingerRemaining(at: .now) }

    // MARK: The arbitration itself

    /// Reads every published session and acts on what concerns this one:
    /// interrupted (silent at once, inactive, `interruption(.began)`), the
    /// interruption over (`.ended`, `.shouldResume` if the interrupter asked
    /// for it or died), ducked or not, the secondary-audio hint; then
    /// publishes this session's own state.
    func arbitrate() {
        // An unreadable store says nothing (above all, not that an interrupter died).
        guard let client = openClient, !client.isClosed, let all = publishedSessions(using: client) else { return }
        let myUUID = client.uuid
        let others = all.filter { $0.uuid != myUUID }
        lookAtOutput()
        let me = PublishedSession(uuid: myUUID, state: currentState(clientName: client.name))
        let interrupter = isActive ? Arbitration.interrupter(of: me, among: others) : nil
        perform(machine.othersPublished(interrupter: interrupter, all: all))
        let processor = activation.processor
        if let processor { watchLevel(of: processor, othersRegistered: !others.isEmpty) }
        let meNow = PublishedSession(uuid: myUUID, state: currentState(clientName: client.name))
        let gain = Arbitration.duckGain(for: meNow, among: others)
        processor?.outputStage.setTargetGain(gain)
        perform(machine.arbitrated(duckGain: gain,
                                   hintWanted: Arbitration.secondaryAudioShouldBeSilenced(for: myUUID, among: others)))
        publishState(on: client)
        board.arbitrationsCompleted.add(1, ordering: .releasing)
    }

    /// Silences the session at once and stops its client: another session took the audio.
    func silenceForInterruption() {
        // Counted before the silence begins: a measurement that heard it sees the count moved.
        board.interruptionsBegun.add(1, ordering: .releasing)
        if let processor = activation.processor {
            processor.outputStage.setMuted(true)
            processor.setSilencesInputs(true)
        }
        try? stopClient()
    }

    /// How the output stage watches the level (what `producingSound` is
    /// made of): every cycle while another session is registered on the
    /// server, since it reads this one's `sounding` (`isOtherAudioPlaying`,
    /// the secondary-audio hint) and a ducker's hold; one cycle in
    /// `loneWatchFrames` while this session is alone, where only `jas
    /// sessions` reads it (a sound shorter than that can be missed there);
    /// not at all in measurement mode, where active means sounding. A
    /// session that arrives is seen by the registry watch, so this one
    /// watches every cycle from then on; what it published before rests on
    /// the sampled looks.
    func watchLevel(of processor: RealtimeProcessor, othersRegistered: Bool) {
        let watch: LevelWatch = preferences.mode == .measurement ? .off
            : othersRegistered ? .everyCycle : .sampled(frames: Self.loneWatchFrames)
        processor.outputStage.setLevelWatch(watch)
    }

    /// Frames between looks at the level while a session is alone on its
    /// server: 21 ms at 48 kHz, one cycle in 8 at 128-frame periods.
    static let loneWatchFrames = 1024

    /// Looks at the output for the machine: whether it is heard (within
    /// `Audibility.hold`) and ducks the others now. Whether either changed.
    @discardableResult
    func lookAtOutput() -> Bool {
        let output: Audibility.Output
        if preferences.category.hasOutput, let processor = activation.processor {
            output = preferences.mode == .measurement ? .measurement
                : .watched(lastAudibleCycle: processor.outputStage.lastAudibleCycle)
        } else {
            output = .none
        }
        return machine.outputLooked(at: output, ducksOthers: preferences.options.contains(.duckOthers),
                                    releaseHold: arbitration.duckReleaseHold, at: .now)
    }

    /// The state this session publishes now.
    func currentState(clientName: String) -> SessionState {
        let prefs = preferences
        let reallyActive = isActive
        let unplaced = activation.plan.streamsWithoutDestination
        let streams = prefs.category == .multiRoute && reallyActive && !prefs.streams.isEmpty
            ? prefs.streams.map { stream in
                SessionState.Stream(name: stream.name, destination: stream.destination, channels: stream.channels,
                                    ports: stream.portNames.map { "\(clientName):\($0)" },
                                    connected: !unplaced.contains(stream.name))
            }
            : nil
        let state = arbitration
        let sound = machine.audibility
        do {
            let announcing = machine.publishesActive && !reallyActive
            let active = machine.publishesActive
            return SessionState(server: serverName, client: clientName, pid: getpid(), category: prefs.category,
                         mode: prefs.mode, options: prefs.options.names, active: active, priority: state.priority,
                         order: sound.order, interrupted: machine.interrupter != nil,
                         interruptedBy: machine.interrupter?.state.client, producingSound: sound.producingSound,
                         ducking: active && prefs.options.contains(.duckOthers) && (announcing || sound.ducking),
                         ducked: machine.ducked, duckLevelDB: state.duckLevelDB, resumeOthers: sound.resumeOthers,
                         streams: streams)
        }
    }

    /// Writes the state to the registry when it changed. A registry that
    /// cannot be written is said once (the next change tries again).
    func publishState(on client: Client) {
        var state = currentState(clientName: client.name)
        state.clientUUID = client.uuid
        let value = state.encoded()
        guard arbitration.published != value else { return }
        arbitration.published = value
        do {
            try registryEntry.publish(value)
        } catch {
            arbitration.published = nil
            guard !registryFailureReported else { return }
            registryFailureReported = true
            let line = "jackaudiosession: \(error); other sessions on '\(serverName)' cannot see this one until it can\n"
            _ = try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
        }
    }

    /// Forgets what was published and which clients were seen (a new client,
    /// or a server that forgot it).
    func forgetPublishedState() {
        arbitration.published = nil
        arbitration.clientsOnServer = [:]
    }

    /// A client left the server: a session's client of that name is asked about again.
    func forgetClient(named name: String) {
        arbitration.clientsOnServer = arbitration.clientsOnServer.filter { $0.value != name }
    }

    /// While the client is open: the registry watch wakes the session when
    /// another session's state changes or its process dies, and a timer
    /// checks every 100 ms whether this session still produces sound and
    /// still ducks (a duck-release hold ends it). A full arbitration also runs
    /// every 2 s in case a wake-up was missed, and every 100 ms when inotify
    /// is unavailable.
    func startArbitrationTimer() {
        guard arbitrationTimer == nil else { return }
        guard let session else { return }
        let queue = session.core.queue
        let watch = RegistryWatch(registry: registryEntry.registry, ownFile: registryEntry.file, queue: queue) {
            [weak session] in session?.scheduleArbitration()
        }
        registryWatch = watch
        let polling = !watch.isWatching
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timerTicks = 0
        timer.schedule(deadline: .now() + 0.1, repeating: 0.1)
        timer.setEventHandler { [weak session] in
            guard let core = session?.core.value else { return }
            core.timerTicks += 1
            core.watchDevicesWhileInactive()
            let changed = core.lookAtOutput()
            if polling || core.timerTicks % 20 == 0 || changed {
                core.arbitrate()
            }
        }
        timer.resume()
        arbitrationTimer = timer
    }

    func stopArbitrationTimer() {
        arbitrationTimer?.cancel()
        arbitrationTimer = nil
        registryWatch = nil
    }
}
