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
/// (the lookups read JACK's shared graph; no request to the server).
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
    public func checkSoon() { queue.async { [weak self] in self?.check() } }

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

    private func check() {
        guard timer != nil, isWatching(), let client = session.client, !client.isClosed else { return }
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
