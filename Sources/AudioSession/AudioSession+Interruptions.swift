import Foundation
import JackKit

extension AudioSession {
    /// A session's priority class. `call` stands for the phone: it interrupts
    /// every other session, mixable or not, and nothing interrupts it or
    /// activates while it is active (`insufficientPriority`).
    public enum Priority: String, Sendable, Codable, CaseIterable {
        case ordinary, call
    }

    /// This session's part in the arbitration between processes.
    struct ArbitrationState {
        var priority: Priority = .ordinary
        var duckLevelDB: Double = -20
        var duckReleaseHold: Double = 2
        /// JACK microseconds at the last activation.
        var order: UInt64 = 0
        /// The session that interrupted this one, while the interruption lasts.
        var interrupter: PublishedSession?
        var resumeOthers = false
        /// Published as active while the activation is under way, before its
        /// audio flows, so those it interrupts fall silent as it starts.
        var announcing = false
        /// When the session last deactivated (others read how it ended).
        var deactivatedAt: Date?
        var producingSound = false
        var lastAudibleCycle: UInt64 = 0
        var lastAudibleAt = Date.distantPast
        var ducked = false
        var secondaryHint = false
        var otherAudioPlaying = false
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

    // MARK: Settings

    /// The priority class (default ordinary); applies from the next activation.
    public var priority: Priority { arbitration.withLock { $0.priority } }

    /// Sets the priority class.
    public func setPriority(_ priority: Priority) {
        arbitration.withLock { $0.priority = priority }
    }

    /// How far this session lowers the others while it ducks them, dB (default −20).
    public var duckLevel: Double { arbitration.withLock { $0.duckLevelDB } }

    /// Sets the duck level, dB in −96…0.
    public func setDuckLevel(_ decibels: Double) throws(AudioSessionError) {
        guard decibels.isFinite, (-96...0).contains(decibels) else {
            throw AudioSessionError(.badParam, "duck level must be between -96 and 0 dB, got \(decibels)")
        }
        arbitration.withLock { $0.duckLevelDB = decibels }
        scheduleArbitration()
    }

    /// Seconds of silence after which a ducking session stops ducking the
    /// others although still active (default 2).
    public var duckReleaseHold: Double { arbitration.withLock { $0.duckReleaseHold } }

    /// Sets the duck-release hold, seconds (≥ 0).
    public func setDuckReleaseHold(_ seconds: Double) throws(AudioSessionError) {
        guard seconds.isFinite, seconds >= 0 else {
            throw AudioSessionError(.badParam, "duck release hold must be a non-negative number of seconds, got \(seconds)")
        }
        arbitration.withLock { $0.duckReleaseHold = seconds }
    }

    // MARK: What the others do

    /// Whether another session on the server is active and producing sound.
    public var isOtherAudioPlaying: Bool {
        guard let client = openClient else { return false }
        return Arbitration.isOtherAudioPlaying(for: client.uuid, among: publishedSessions(using: client) ?? [])
    }

    /// Whether another session's primary (non-mixable) audio is playing.
    public var secondaryAudioShouldBeSilencedHint: Bool {
        guard let client = openClient else { return false }
        return Arbitration.secondaryAudioShouldBeSilenced(for: client.uuid, among: publishedSessions(using: client) ?? [])
    }

    /// Whether the session was interrupted and the interruption has not ended.
    public var isInterrupted: Bool { arbitration.withLock { $0.interrupter != nil } }

    /// The JACK client name of the session interrupting this one (nil: none).
    public var interruptingClient: String? { arbitration.withLock { $0.interrupter?.state.client } }

    /// Whether another session lowers this one now.
    public var isDucked: Bool { arbitration.withLock { $0.ducked } }

    /// Every session published on the server, this one included.
    public func publishedSessions() -> [PublishedSession] {
        guard let client = openClient else { return [] }
        return publishedSessions(using: client) ?? []
    }

    /// nil when the registry could not be read.
    func publishedSessions(using client: Client) -> [PublishedSession]? {
        let isOnServer = { [self] (uuid: UInt64, name: String) -> Bool in
            if arbitration.withLock({ $0.clientsOnServer[uuid] }) == name { return true }
            guard client.clientName(ofUUID: uuid) == name else { return false }
            arbitration.withLock { $0.clientsOnServer[uuid] = name }
            return true
        }
        return SessionDirectory.sessions(in: registryEntry.registry, onServer: isOnServer) { [self] file, refusal in
            let key = "\(file):\(refusal)"
            guard arbitration.withLock({ $0.refusalsReported.insert(key).inserted }) else { return }
            let line = "jackaudiosession: ignoring the session state in \(registryEntry.registry.directory)/\(file): "
                + "\(refusal)\n"
            _ = try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
        }
    }

    // MARK: Activation hooks (called with `transition` held)

    /// Refuses an activation while another process's call is active.
    func checkActivationAllowed(on client: Client) throws(AudioSessionError) {
        let others = publishedSessions(using: client) ?? []
        if let call = Arbitration.blockingCall(for: client.uuid, among: others) {
            throw AudioSessionError(.insufficientPriority, "the call-class session '\(call.state.client)' is active on "
                                        + "server '\(serverName)'; nothing can activate until it ends")
        }
    }

    /// Before an activation connects its ports: publishes the session as
    /// active with its place in the activation order (JACK microseconds at
    /// the request), so the sessions it interrupts are silenced while its own
    /// audio starts rather than one notification later.
    func announceActivation(order: UInt64, on client: Client) {
        arbitration.withLock {
            $0.announcing = true
            $0.order = order
            $0.interrupter = nil
            $0.resumeOthers = false
            $0.producingSound = true
            $0.lastAudibleAt = Date()
        }
        publishState(on: client)
    }

    /// An activation that failed after it was announced: published as inactive again.
    func withdrawAnnouncement(on client: Client) {
        guard arbitration.withLock({ state -> Bool in
            defer { state.announcing = false }
            return state.announcing
        }) else { return }
        arbitration.withLock { $0.producingSound = false }
        publishState(on: client)
    }

    /// After an activation: its place in the activation order (`order`, JACK
    /// microseconds; nil for a reset, which keeps its place), ducking starts
    /// at once, and the state is published.
    func didActivate(processor: RealtimeProcessor, order: UInt64?) {
        let measurement = preferences.withLock { $0.mode == .measurement }
        processor.outputStage.setWatchesLevel(!measurement)
        arbitration.withLock {
            if let order { $0.order = order } else if $0.order == 0 { $0.order = Client.microsecondTime }
            $0.announcing = false
            $0.interrupter = nil
            $0.resumeOthers = false
            $0.lastAudibleCycle = 0
            $0.lastAudibleAt = Date()
            $0.producingSound = true
        }
        startArbitrationTimer()
        arbitrate()
    }

    /// After a deactivation: published, so those waiting on this session see it.
    func didDeactivate(notifyingOthers: Bool) {
        arbitration.withLock {
            $0.resumeOthers = notifyingOthers
            $0.deactivatedAt = Date()
            $0.producingSound = false
            $0.ducked = false
        }
        arbitrate()
    }

    /// A closed session's file is withdrawn, and a session that vanishes
    /// looks like one that crashed (whose interruptions end with
    /// shouldResume). So a close right after a deactivation waits until 0.3 s
    /// have passed since it, long enough for the other sessions to read
    /// whether it deactivated with notifyOthersOnDeactivation (they are woken
    /// by the registry at once, or poll every 100 ms without inotify).
    func lingerAfterDeactivation() {
        guard let deactivatedAt = arbitration.withLock({ $0.deactivatedAt }) else { return }
        let remaining = 0.3 - Date().timeIntervalSince(deactivatedAt)
        if remaining > 0 { usleep(UInt32(remaining * 1_000_000)) }
    }

    // MARK: The arbitration itself

    /// Runs `arbitrate` soon on the worker (from JACK's notification thread
    /// or the registry watch); a burst of requests runs it once.
    func scheduleArbitration() {
        guard !arbitrationScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        worker.async { [weak self] in
            self?.arbitrationScheduled.store(false, ordering: .releasing)
            self?.arbitrate()
        }
    }

    /// Reads every published session and acts on what concerns this one:
    /// interrupted (silent at once, inactive, `interruption(.began)`), the
    /// interruption over (`.ended`, `.shouldResume` if the interrupter asked
    /// for it or died), ducked or not, the secondary-audio hint; then
    /// publishes this session's own state.
    func arbitrate() {
        transition.lock()
        defer { transition.unlock() }
        // An unreadable store says nothing (above all, not that an interrupter died).
        guard let client = openClient, !client.isClosed, let all = publishedSessions(using: client) else { return }
        let myUUID = client.uuid
        let others = all.filter { $0.uuid != myUUID }
        updateProducingSound()
        let me = PublishedSession(uuid: myUUID, state: currentState(clientName: client.name))
        if isActive, let interrupter = Arbitration.interrupter(of: me, among: others) {
            interrupt(by: interrupter)
        } else if let waitingOn = arbitration.withLock({ $0.interrupter }) {
            let now = all.first { $0.uuid == waitingOn.uuid }
            if now == nil || now?.state.active == false || now?.state.order != waitingOn.state.order {
                // Gone (closed or crashed: resume), deactivated (resume if it
                // said so), or active again since (a new activation: its
                // interruption of this session has ended; resume only if told).
                let resume = now == nil || now?.state.resumeOthers == true
                arbitration.withLock { $0.interrupter = nil }
                hub.post(.interruption(type: .ended, options: resume ? .shouldResume : [], reason: .default))
            }
        }
        let processor = activation.withLock { $0.processor }
        let meNow = PublishedSession(uuid: myUUID, state: currentState(clientName: client.name))
        let gain = Arbitration.duckGain(for: meNow, among: others)
        processor?.outputStage.setTargetGain(gain)
        let (hintChanged, hint) = arbitration.withLock { state -> (Bool, Bool) in
            state.ducked = isActive && gain < 1
            let hint = Arbitration.secondaryAudioShouldBeSilenced(for: myUUID, among: others)
            defer { state.secondaryHint = hint }
            return (hint != state.secondaryHint, hint)
        }
        if hintChanged { hub.post(.silenceSecondaryAudioHint(begin: hint)) }
        publishState(on: client)
    }

    /// Silences the session at once and deactivates it because `interrupter` took the audio.
    private func interrupt(by interrupter: PublishedSession) {
        if let processor = activation.withLock({ $0.processor }) {
            processor.outputStage.setMuted(true)
            processor.setSilencesInputs(true)
        }
        try? deactivateLocked(checkBusy: false)
        arbitration.withLock {
            $0.interrupter = interrupter
            $0.producingSound = false
            $0.ducked = false
        }
        let reason: InterruptionReason = interrupter.state.priority == .call ? .callStarted : .default
        hub.post(.interruption(type: .began, options: [], reason: reason))
    }

    /// Whether the output carried sound within the duck-release hold.
    private func updateProducingSound() {
        let processor = activation.withLock { $0.processor }
        let (category, mode) = preferences.withLock { ($0.category, $0.mode) }
        let active = isActive
        arbitration.withLock { state in
            guard active, category.hasOutput, let processor else {
                state.producingSound = false
                return
            }
            // A measurement path is not watched: active means sounding.
            guard mode != .measurement else {
                state.producingSound = true
                return
            }
            let cycle = processor.outputStage.lastAudibleCycle
            if cycle != state.lastAudibleCycle {
                state.lastAudibleCycle = cycle
                state.lastAudibleAt = Date()
            }
            state.producingSound = Date().timeIntervalSince(state.lastAudibleAt) <= state.duckReleaseHold
        }
    }

    /// The state this session publishes now.
    func currentState(clientName: String) -> SessionState {
        let prefs = preferences.withLock { $0 }
        let reallyActive = isActive
        let unplaced = activation.withLock { $0.plan.streamsWithoutDestination }
        let streams = prefs.category == .multiRoute && reallyActive && !prefs.streams.isEmpty
            ? prefs.streams.map { stream in
                SessionState.Stream(name: stream.name, destination: stream.destination, channels: stream.channels,
                                    ports: stream.portNames.map { "\(clientName):\($0)" },
                                    connected: !unplaced.contains(stream.name))
            }
            : nil
        return arbitration.withLock { state in
            let active = reallyActive || state.announcing
            return SessionState(server: serverName, client: clientName, pid: getpid(), category: prefs.category,
                         mode: prefs.mode, options: prefs.options.names, active: active, priority: state.priority,
                         order: state.order, interrupted: state.interrupter != nil,
                         interruptedBy: state.interrupter?.state.client, producingSound: state.producingSound,
                         ducking: active && prefs.options.contains(.duckOthers) && state.producingSound,
                         ducked: state.ducked, duckLevelDB: state.duckLevelDB, resumeOthers: state.resumeOthers,
                         streams: streams)
        }
    }

    /// Writes the state to the registry when it changed. A registry that
    /// cannot be written is said once (the next change tries again).
    func publishState(on client: Client) {
        var state = currentState(clientName: client.name)
        state.clientUUID = client.uuid
        let value = state.encoded()
        let changed = arbitration.withLock { state -> Bool in
            defer { state.published = value }
            return state.published != value
        }
        guard changed else { return }
        do {
            try registryEntry.publish(value)
        } catch {
            arbitration.withLock { $0.published = nil }
            guard !registryFailureReported.exchange(true, ordering: .relaxed) else { return }
            let line = "jackaudiosession: \(error); other sessions on '\(serverName)' cannot see this one until it can\n"
            _ = try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
        }
    }

    /// Forgets what was published and which clients were seen (a new client,
    /// or a server that forgot it).
    func forgetPublishedState() {
        arbitration.withLock {
            $0.published = nil
            $0.clientsOnServer = [:]
        }
    }

    /// A client left the server: a session's client of that name is asked about again.
    func forgetClient(named name: String) {
        arbitration.withLock { state in state.clientsOnServer = state.clientsOnServer.filter { $0.value != name } }
    }

    /// While the client is open: the registry watch wakes the session when
    /// another session's state changes or its process dies, and a timer
    /// checks every 100 ms whether this session still produces sound (ducking
    /// ends after the hold). A full arbitration also runs every 2 s in case a
    /// wake-up was missed, and every 100 ms when inotify is unavailable.
    func startArbitrationTimer() {
        guard arbitrationTimer == nil else { return }
        let watch = RegistryWatch(registry: registryEntry.registry, ownFile: registryEntry.file, queue: worker) {
            [weak self] in self?.scheduleArbitration()
        }
        registryWatch = watch
        let polling = !watch.isWatching
        let timer = DispatchSource.makeTimerSource(queue: worker)
        var ticks = 0
        timer.schedule(deadline: .now() + 0.1, repeating: 0.1)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            ticks += 1
            let before = self.arbitration.withLock { $0.producingSound }
            self.transition.lock()
            self.updateProducingSound()
            self.transition.unlock()
            let producing = self.arbitration.withLock { $0.producingSound }
            if polling || ticks % 20 == 0 || producing != before { self.arbitrate() }
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
