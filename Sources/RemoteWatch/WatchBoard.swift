import JackAudioSession
import EventSchema
import Foundation
import Metering
import Recording
import Synchronization

/// What the watch server shows. The tool feeds it from its own threads, off
/// the real-time path (a reading per interval, each event, the take's
/// progress), as the typed values of the event schema; it keeps the state
/// they imply (server up, dead air, xruns, resets) for the page and the
/// metrics, and streams each value as the line `--json` prints for it. The
/// routes and the WebSocket viewers read it. Nothing here waits on a viewer.
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
        var reading: Stamped<MeterReading>?
        var progress: Stamped<RecordingProgress>?
        var serverUp = true
        var silence = false
        /// The compliance target kept (nil: none) and its alarms on now.
        var loudnessTarget: LoudnessTarget?
        var loudnessAlarms: Set<String> = []
        /// The compliance log's last interval line (with the hour's and the day's loudness so far).
        var lastInterval: Stamped<LoudnessLogLine>?
        var xruns = 0
        var resets = 0
        var recent: [Stamped<AnyEvent>] = []
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

    /// A reading of the meter.
    public func publish(_ reading: MeterReading, at time: Date = Date()) {
        let stamped = Stamped(reading, at: time)
        metrics.update(reading)
        state.withLock { $0.reading = stamped }
        hub.broadcast(EventEncoding.line(stamped))
    }

    /// A take's progress, with the totals the metrics count.
    public func publish(_ progress: RecordingProgress, at time: Date = Date()) {
        let stamped = Stamped(progress, at: time)
        metrics.updateRecord(framesWritten: progress.framesWritten, overruns: progress.overruns,
                             gapFrames: progress.gapFrames, clockRateErrorPPM: progress.rateErrorPPM)
        if let path = progress.path {
            var disk = statvfs()
            if statvfs((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent,
                       &disk) == 0 {
                metrics.updateDisk(freeBytes: Double(disk.f_bavail) * Double(disk.f_frsize),
                                   sizeBytes: Double(disk.f_blocks) * Double(disk.f_frsize))
            }
        }
        state.withLock { $0.progress = stamped }
        hub.broadcast(EventEncoding.line(stamped))
    }

    /// A session event: the server's loss and return, xruns.
    public func publish(_ event: AudioSessionEvent, at time: Date = Date()) {
        switch event {
        case .mediaServicesWereLost: setServerUp(false)
        case .mediaServicesWereReset: setServerUp(true)
        case let .xrun(count, _, _, _): addXruns(count)
        default: break
        }
        publish(event: event, at: time)
    }

    /// A recording's event: the server's loss and return, dead air, xruns.
    public func publish(_ event: RecordingEvent, at time: Date = Date()) {
        switch event {
        case .serverLost: setServerUp(false)
        case .serverBack: setServerUp(true)
        case .silence: setSilence(true)
        case .signal: setSilence(false)
        case .xrun: addXruns(1)
        case let .loudnessAlarm(change, _): setLoudnessAlarm(change)
        default: break
        }
        publish(event: event, at: time)
    }

    /// A meter's event: dead air, compliance alarms and their ends.
    public func publish(_ event: MeterEvent, at time: Date = Date()) {
        switch event {
        case .silence: setSilence(true)
        case .signal: setSilence(false)
        case let .loudnessAlarm(change, _): setLoudnessAlarm(change)
        default: break
        }
        publish(event: event, at: time)
    }

    /// A line of the compliance log: an interval on the clock's boundaries, an hour, a day, a gap.
    public func publish(_ line: LoudnessLogLine, at time: Date = Date()) {
        let stamped = Stamped(line, at: time)
        if case .interval = line { state.withLock { $0.lastInterval = stamped } }
        hub.broadcast(EventEncoding.line(stamped))
    }

    /// Any other event of the schema (the tool's own: its summary, where it serves).
    public func publish(event: some Encodable & Sendable, at time: Date = Date()) {
        let stamped = Stamped(AnyEvent(event), at: time)
        state.withLock { state in
            state.recent.append(stamped)
            if state.recent.count > Self.recentEvents { state.recent.removeFirst(state.recent.count - Self.recentEvents) }
        }
        hub.broadcast(EventEncoding.line(stamped))
    }

    func setLoudnessAlarm(_ change: LoudnessAlarm.Change) {
        state.withLock { state in
            if change.on { state.loudnessAlarms.insert(change.kind.rawValue) } else { state.loudnessAlarms.remove(change.kind.rawValue) }
        }
        metrics.setLoudnessAlarm(change.kind, on: change.on)
    }

    /// The tool keeps this loudness target: its alarms are on the metrics and in the status.
    public func keepLoudness(_ target: LoudnessTarget) {
        state.withLock { $0.loudnessTarget = target }
        metrics.watchLoudness()
    }

    /// The JACK server went away (false) or the session is back on one (true).
    func setServerUp(_ up: Bool) {
        let cameBack = state.withLock { state -> Bool in
            defer { state.serverUp = up }
            guard up && !state.serverUp else { return false }
            state.resets += 1
            return true
        }
        metrics.setServerUp(up)
        if cameBack { metrics.addReset() }
    }

    func addXruns(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.xruns += count }
        metrics.addXruns(count)
    }

    /// The silence alarm is on (dead air) or off.
    func setSilence(_ on: Bool) {
        state.withLock { $0.silence = on }
        metrics.setSilence(on)
    }

    /// Viewers connected now.
    public var viewers: Int { hub.count }

    /// `GET /api/status` and the first line a viewer gets: the state now, the last reading and events.
    func statusLine(at time: Date = Date()) -> String {
        EventEncoding.line(Status(tool: tool, state: state.withLock { $0 }), at: time)
    }

    private struct Status: Encodable {
        let tool: Tool
        let state: State

        func encode(to encoder: any Encoder) throws {
            var json = encoder.container(keyedBy: EventKey.self)
            // The facts first: a fact named as a key below cannot replace it.
            for (key, value) in state.facts { try json.encode(value, forKey: EventKey(stringValue: key)) }
            try json.encode("status", forKey: "event")
            try json.encode(tool.rawValue, forKey: "tool")
            try json.encode(state.serverUp, forKey: "server_up")
            try json.encode(state.silence, forKey: "silence")
            if let target = state.loudnessTarget {
                try json.encode(state.loudnessAlarms.sorted(), forKey: "loudness_alarms")
                try json.encode(target.name, forKey: "loudness_target")
                try json.encodeFigure(target.targetLUFS, forKey: "target_lufs")
                try json.encodeFigure(target.toleranceLU, forKey: "tolerance_lu")
                try json.encodeFigure(target.maxTruePeakDBTP, forKey: "max_true_peak_dbtp")
            }
            try json.encode(state.xruns, forKey: "xruns")
            try json.encode(state.resets, forKey: "media_services_resets")
            try json.encode(state.ports, forKey: "ports")
            try json.encodeOrNull(state.reading, forKey: "reading")
            try json.encodeOrNull(state.progress, forKey: "progress")
            if let interval = state.lastInterval { try json.encode(interval, forKey: "last_interval") }
            try json.encode(state.recent, forKey: "recent_events")
        }
    }

    /// Ends every viewer's stream (the tool is stopping).
    func finish() { hub.finish() }
}
