import Foundation
import JackKit
import JackRuntime

/// libjack's callbacks, on its notification thread: they count, then hand
/// the work to the session's queue as a message and return at once. A
/// message names the client it came from, and the core drops it when that is
/// not the session's client any more (a late word from a client a reset replaced).
extension AudioSession {
    /// Opens a JACK client for the session with its handlers, without making
    /// it the session's. Runs anywhere (the reconnect thread opens off the queue).
    func makeClient() throws(AudioSessionError) -> Client {
        do {
            let client = try Client.checkedOpen(name: clientName, serverName: serverName)
            board.serverPresence.withLock { $0 = ServerProcess.presence(serverName: client.serverName) }
            let sender = ObjectIdentifier(client)
            try client.setEventHandler { [weak self, weak client] event in
                if case .xrun = event, let self, let client { self.noteXrun(at: client.cycleFrameTime) }
                self?.handle(event, from: sender)
            }
            if setsOwnLatencyRanges(serverName: serverName) {
                try client.setLatencyHandler { [weak self] mode in self?.reportLatency(mode) }
            }
            return client
        } catch {
            throw AudioSessionError(.mediaServicesFailed, "cannot reach the media server: \(error.description)", cause: error)
        }
    }

    /// Runs `work` on the session's queue after `delay` seconds, unless the session is gone by then.
    func enqueue(after delay: Double = 0, _ work: @escaping @Sendable (SessionCore) -> Void) {
        let job: @Sendable () -> Void = { [weak self] in
            guard let self else { return }
            work(self.core.value)
        }
        if delay > 0 { core.queue.asyncAfter(deadline: .now() + delay, execute: job) } else { core.queue.async(execute: job) }
    }

    /// On the notification thread, as an xrun comes: the cycle it came in,
    /// kept for the report if it is the first not yet reported.
    private func noteXrun(at frameTime: UInt32) {
        _ = board.firstUnreportedXrunFrame.compareExchange(expected: 0, desired: 1 << 32 | UInt64(frameTime),
                                                           ordering: .acquiringAndReleasing)
    }

    private func handle(_ event: ClientEvent, from sender: ObjectIdentifier) {
        switch event {
        case .portRegistration, .clientRegistration, .portConnection:
            board.graphChanges.add(1, ordering: .releasing)
        default:
            break
        }
        switch event {
        case .xrun:
            board.xruns.add(1, ordering: .relaxed)
            enqueue(after: 0.25) { $0.reportXruns() }
        case let .bufferSizeChanged(frames):
            // JACK also calls this at activation with the unchanged size.
            guard board.lastPeriod.exchange(frames, ordering: .relaxed) != frames else { return }
            enqueue { $0.periodChanged(to: frames, from: sender) }
        case .portRegistration:
            scheduleRouteRefresh()
        case let .propertyChange(_, key, _) where DataSourceTraits.keys.contains(key):
            scheduleRouteRefresh()   // a device said something new about a data source
        case let .clientRegistration(name, registered):
            scheduleRouteRefresh()
            // A session's client that went away may have been interrupting or
            // ducking this one. Forgotten and arbitrated in one job: an
            // arbitration queued before it would still see the client.
            if !registered {
                enqueue { core in
                    core.forgetClient(named: name)
                    core.arbitrate()
                }
            }
        case let .shutdown(_, reason):
            enqueue { $0.mediaServicesLost(reason: reason.isEmpty ? "JACK server shut down" : reason, from: sender) }
        default:
            break
        }
    }

    /// Coalesces a burst of registrations (a device's ports, its client) into
    /// one refresh, run when no registration came for 50 ms, so a device that
    /// is being plugged or unplugged port by port is not seen half there; and
    /// at the latest 250 ms after the first registration it answers, so a
    /// steady churn of short-lived clients (a script running `jack_lsp` in a
    /// loop) cannot put a device's arrival off for ever.
    func scheduleRouteRefresh() {
        let generation = board.registrationGeneration.add(1, ordering: .acquiringAndReleasing).newValue
        let now = MonotonicClock.nanoseconds
        _ = board.refreshPendingSince.compareExchange(expected: 0, desired: now, ordering: .acquiringAndReleasing)
        enqueue(after: 0.05) { core in
            let since = core.board.refreshPendingSince.load(ordering: .acquiring)
            let overdue = since != 0 && MonotonicClock.nanoseconds - since >= 250_000_000
            guard core.board.registrationGeneration.load(ordering: .acquiring) == generation || overdue else { return }
            core.board.refreshPendingSince.store(0, ordering: .releasing)
            core.refreshRoute()
        }
    }

    /// Runs the arbitration soon on the queue (from JACK's notification
    /// thread, the registry watch or the core); a burst of requests runs it once.
    func scheduleArbitration() {
        guard !board.arbitrationScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        enqueue { core in
            core.board.arbitrationScheduled.store(false, ordering: .releasing)
            core.arbitrate()
        }
    }

    /// Whether the session's client sets its ports' latency ranges in a
    /// latency callback of its own, rather than leaving them to libjack's
    /// propagation (each port the range of what it is connected to, passed
    /// on through the client), which gives the same ranges where the session
    /// adds nothing. On jackd2 a latency callback is costly: jackd waits for
    /// it, and its first port call sleeps 1.1 periods while any graph change
    /// is pending (`WaitGraphChange`), which in a server's comeback is
    /// nearly always: three tools came back from restarts in 41–47 ms at
    /// the median without it, 61–74 ms with it (BENCHMARKS.md). So the
    /// session sets ranges itself only where it adds something: where a
    /// calibrated correction is stored for the server, and on PipeWire,
    /// where its ranges pass the correction on differently (see
    /// `SessionPorts.reportLatency`). A calibration stored while a client
    /// without the callback is open is in the session's reported latency
    /// from its next activation or route change, and in its ports' ranges
    /// from its next client on (meanwhile `latencyIsSettled` says they are
    /// not).
    private func setsOwnLatencyRanges(serverName: String) -> Bool {
        LibraryVersion.isPipeWire || latencyCalibration?.entries()[serverName] != nil
    }

    /// JACK's latency callback. It reads the ports from the board, never
    /// the queue: jack2 runs it while a connection the queue makes is still
    /// waiting for the server.
    private func reportLatency(_ mode: LatencyMode) {
        StepTrace.note("latency callback (\(mode)): reading and setting the ranges")
        defer { StepTrace.note("latency callback (\(mode)): done") }
        let (ports, processor) = board.read { ($0.activation.ports, $0.activation.processor) }
        ports?.reportLatency(mode)
        guard mode == .playback else { return }
        board.latencyPasses.add(1, ordering: .releasing)
        processor?.lookAgain()
    }
}
