import Foundation
import Metering
import Synchronization

/// What the watch server shows. The tool feeds it from its own threads, off
/// the real-time path (a reading per interval, each event, the take's
/// progress), as the JSON lines its `--json` prints; the routes and the
/// WebSocket viewers read it. Nothing here waits on a viewer.
public final class WatchBoard: Sendable {
    /// The command being watched.
    public enum Tool: String, Sendable { case meter, record }

    public let tool: Tool
    let hub = WatchHub()
    let metrics: WatchMetrics
    private let state: Mutex<State>
    /// Events kept for `/api/status` and a viewer that connects later.
    static let recentEvents = 20

    private struct State {
        var facts: [String: String] = [:]
        var ports: [String] = []
        var reading: String?
        var progress: String?
        var serverUp = true
        var silence = false
        var xruns = 0
        var resets = 0
        var recent: [String] = []
    }

    /// `server`: the JACK server's name.
    public init(tool: Tool, server: String) {
        self.tool = tool
        metrics = WatchMetrics(recording: tool == .record)
        state = Mutex(State(facts: ["server": server]))
    }

    /// Facts the page shows as they are (e.g. `path` for a take), and the ports watched.
    public func describe(_ facts: [String: String], ports: [String]) {
        state.withLock { state in
            state.facts.merge(facts) { $1 }
            state.ports = ports
        }
    }

    /// A reading, with the line `--json` prints for it.
    public func publish(_ reading: MeterReading, line: String) {
        metrics.update(reading)
        state.withLock { $0.reading = line }
        hub.broadcast(line)
    }

    /// An event, as the line `--json` prints for it.
    public func publish(eventLine line: String) {
        state.withLock { state in
            state.recent.append(line)
            if state.recent.count > Self.recentEvents { state.recent.removeFirst(state.recent.count - Self.recentEvents) }
        }
        hub.broadcast(line)
    }

    /// A take's progress line, with the totals the metrics count.
    public func publish(progressLine line: String, framesWritten: Int64, overruns: Int, gapFrames: Int64,
                        clockRateErrorPPM: Double? = nil) {
        metrics.updateRecord(framesWritten: framesWritten, overruns: overruns, gapFrames: gapFrames,
                             clockRateErrorPPM: clockRateErrorPPM)
        state.withLock { $0.progress = line }
        hub.broadcast(line)
    }

    /// The JACK server went away (false) or the session is back on one (true).
    public func setServerUp(_ up: Bool) {
        let cameBack = state.withLock { state -> Bool in
            defer { state.serverUp = up }
            guard up && !state.serverUp else { return false }
            state.resets += 1
            return true
        }
        metrics.setServerUp(up)
        if cameBack { metrics.addReset() }
    }

    public func addXruns(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.xruns += count }
        metrics.addXruns(count)
    }

    /// The silence alarm is on (dead air) or off.
    public func setSilence(_ on: Bool) {
        state.withLock { $0.silence = on }
        metrics.setSilence(on)
    }

    /// Viewers connected now.
    public var viewers: Int { hub.count }

    /// `GET /api/status` and the first line a viewer gets: the state now, the last reading and events.
    func statusLine() -> String {
        let copy = state.withLock { $0 }
        func parsed(_ line: String?) -> Any {
            guard let line, let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) else { return NSNull() }
            return object
        }
        var object: [String: Any] = [
            "event": "status", "tool": tool.rawValue, "server_up": copy.serverUp, "silence": copy.silence,
            "xruns": copy.xruns, "media_services_resets": copy.resets, "ports": copy.ports,
            "reading": parsed(copy.reading), "progress": parsed(copy.progress),
            "recent_events": copy.recent.map { parsed($0) }, "time": Date().timeIntervalSince1970,
        ]
        for (key, value) in copy.facts { object[key] = value }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Ends every viewer's stream (the tool is stopping).
    func finish() { hub.finish() }
}
