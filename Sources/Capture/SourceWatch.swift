import JackAudioSession
import Foundation
import JackKit

/// The presence of the ports a take records or a meter meters. When one goes
/// away (its client exits or crashes, a device is unplugged), JACK
/// disconnects it and the session hears silence: the watch says so at once
/// (`onLost`), and when ports of the same names are back and connected
/// again (the session reconnects them), says how long they were away
/// (`onBack`). Stopped while a source is away, it reports the absence as
/// ending there (`onBack` with no frame time). Checks every 20 ms, and at
/// once when the session reports a route change, off the real-time path
/// (the lookups read JACK's shared graph; no request to the server). A check
/// looks the ports up only when JACK's graph may have changed (`LookSchedule`):
/// each lookup is a scan of the server's port table by name, and looking up
/// 64 ports every 20 ms was 5 % of `jas record`'s CPU.
public final class SourceWatch: @unchecked Sendable { // `timer` and `absence` are touched only on `queue`
    /// Ports that went away, and where on the caller's timeline.
    public struct Absence: Sendable, Equatable {
        public let ports: [String]
        public let at: Int64
    }

    private let ports: [String]
    private let session: AudioSession
    private let isWatching: @Sendable () -> Bool
    private let position: @Sendable (_ frameTime: UInt32?) -> Int64
    private let onLost: @Sendable (Absence) -> Void
    private let onBack: @Sendable (_ absence: Absence, _ end: Int64, _ frameTime: UInt32?) -> Void
    private let queue = DispatchQueue(label: "jas.sources")
    private var timer: DispatchSourceTimer?
    /// The ports away and where they went (queue-confined).
    private var absence: Absence?
    /// When to look the ports up again (queue-confined).
    private var schedule = LookSchedule()

    /// Watches `ports` of `session` while `isWatching` (not while the server
    /// is gone, say); `position` places a JACK frame time on the caller's
    /// timeline (nil: the end of it so far).
    public init(ports: [String], session: AudioSession, isWatching: @escaping @Sendable () -> Bool,
                position: @escaping @Sendable (_ frameTime: UInt32?) -> Int64,
                onLost: @escaping @Sendable (Absence) -> Void,
                onBack: @escaping @Sendable (_ absence: Absence, _ end: Int64, _ frameTime: UInt32?) -> Void) {
        self.ports = ports
        self.session = session
        self.isWatching = isWatching
        self.position = position
        self.onLost = onLost
        self.onBack = onBack
    }

    public func start() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 0.02, repeating: 0.02)
        timer.setEventHandler { [weak self] in self?.check() }
        timer.resume()
        queue.sync { self.timer = timer }
    }

    /// Looks now (a route change: a device came or went).
    public func checkSoon() { queue.async { [weak self] in self?.check(now: true) } }

    /// Stops watching; a source still away is reported as back at the end.
    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
            guard let absence else { return }
            self.absence = nil
            onBack(absence, position(nil), nil)
        }
    }

    private func check(now: Bool = false) {
        guard timer != nil, isWatching(), let client = session.client, !client.isClosed else { return }
        // The count is read before the lookups: a change during them moves it, and the next tick looks again.
        let changes = session.graphChangeCount
        guard schedule.looks(client: ObjectIdentifier(client), graphChanges: changes, sourcesAway: absence != nil) || now
        else { return }
        let absent = ports.filter { client.port(named: $0) == nil }
        if let current = absence {
            if absent.isEmpty && ports.allSatisfy({ isConnected($0, to: client) }) {
                let now = client.cycleFrameTime
                absence = nil
                onBack(current, position(now), now)
            } else if !Set(absent).isSubset(of: current.ports) {
                absence = Absence(ports: current.ports + absent.filter { !current.ports.contains($0) }, at: current.at)
            }
        } else if !absent.isEmpty {
            let lost = Absence(ports: absent, at: position(client.cycleFrameTime))
            absence = lost
            onLost(lost)
        }
    }

    /// Whether the port feeds one of the session's inputs again.
    private func isConnected(_ port: String, to client: Client) -> Bool {
        client.port(named: port)?.connections.contains { $0.hasPrefix(client.name + ":") } ?? false
    }
}

extension SourceWatch {
    /// Which of the watch's 20 ms ticks look the ports up. JACK tells the
    /// session's client of every registration and connection
    /// (`AudioSession.graphChangeCount`), but its port lookups may answer
    /// from the graph as it was for a cycle or more after the word came (a
    /// change becomes current in the server's next cycle; a loaded machine
    /// delays it). So every tick looks while sources are away, and for
    /// `settleTicks` after the count moved or the client changed; otherwise
    /// one tick in `idleTicks` looks, in case a word was never given (the
    /// client's callbacks are held back while it opens or closes).
    struct LookSchedule {
        /// 0.5 s of ticks after a change.
        static let settleTicks = 25
        /// 2 s of ticks without one.
        static let idleTicks = 100
        private var client: ObjectIdentifier?
        private var graphChanges = 0
        private var ticksSinceChange = 0
        private var ticksSinceLook = 0

        /// Whether this tick looks the ports up.
        mutating func looks(client: ObjectIdentifier, graphChanges: Int, sourcesAway: Bool) -> Bool {
            if client != self.client || graphChanges != self.graphChanges {
                self.client = client
                self.graphChanges = graphChanges
                ticksSinceChange = 0
            } else {
                ticksSinceChange += 1
            }
            ticksSinceLook += 1
            let looks = sourcesAway || ticksSinceChange < Self.settleTicks || ticksSinceLook >= Self.idleTicks
            if looks { ticksSinceLook = 0 }
            return looks
        }
    }
}
