import Foundation
import JackKit

/// Frames the session adds to what JACK reports for the hardware ports it is
/// connected to, so that `inputLatency`/`outputLatency` (and the ranges JACK
/// passes on downstream of the session's ports) match a measurement.
public struct LatencyCorrection: Sendable, Equatable, Codable {
    /// Added to the capture latency of the session's inputs, frames.
    public var captureFrames: Int
    /// Added to the playback latency of the session's outputs, frames.
    public var playbackFrames: Int

    /// A correction of `captureFrames` and `playbackFrames`.
    public init(captureFrames: Int = 0, playbackFrames: Int = 0) {
        self.captureFrames = captureFrames
        self.playbackFrames = playbackFrames
    }

    /// No correction.
    public static let none = LatencyCorrection()
}

/// Measured latency corrections, per server and hardware port, kept in
/// `$XDG_CONFIG_HOME/jackaudiosession/latency-calibration.json` (or
/// `~/.config/...`). `jas latency --calibrate` writes it; every session reads
/// it when it activates and applies it in its latency callback, as zita-a2j
/// does for its own ports.
///
/// A round trip measures the sum of the capture and the playback side; which
/// part belongs where cannot be told from outside, so a round-trip excess is
/// split evenly (the odd frame to playback), as far as neither side's
/// corrected latency would go below zero.
public struct LatencyCalibrationStore: Sendable {
    /// The file the corrections are kept in.
    public let path: String

    /// The store at the XDG location, or at `path`.
    public init(path: String? = nil) {
        self.path = path ?? ConfigurationFile.path("latency-calibration.json")
    }

    /// One server's corrections: hardware port name → frames.
    public struct ServerEntry: Codable, Sendable, Equatable {
        /// Capture ports' corrections, frames by port name.
        public var capture: [String: Int] = [:]
        /// Playback ports' corrections, frames by port name.
        public var playback: [String: Int] = [:]
    }

    /// Everything stored, by server name.
    /// A damaged file counts as no corrections; `damage` says why.
    public func entries() -> [String: ServerEntry] {
        (try? ConfigurationFile.read([String: ServerEntry].self, from: path)) ?? [:]
    }

    /// Why the file cannot be read (nil when it can, or does not exist).
    public var damage: String? { ConfigurationFile.damage(of: path, as: [String: ServerEntry].self) }

    /// The correction for a session on `server` whose inputs are connected to
    /// `capturePorts` and outputs to `playbackPorts`: the largest stored for
    /// any of them (a session's latency is the worst case of its connections).
    public func correction(server: String, capturePorts: [String], playbackPorts: [String]) -> LatencyCorrection {
        guard let entry = entries()[server] else { return .none }
        return LatencyCorrection(captureFrames: capturePorts.compactMap { entry.capture[$0] }.max() ?? 0,
                                 playbackFrames: playbackPorts.compactMap { entry.playback[$0] }.max() ?? 0)
    }

    /// Adds a measured round-trip excess (measured − reported, frames) to the
    /// correction of the path `playbackPort` → `capturePort` and returns the
    /// path's new correction. The reported value the excess was measured
    /// against already contained the old correction, so the new one is the
    /// old total plus the excess, rounded to whole frames and split evenly —
    /// except that no side is corrected below zero: given what JACK reported
    /// for each side (`reportedCapture`, `reportedPlayback`, frames, including
    /// the old correction), a side that cannot take its half passes the rest
    /// to the other.
    @discardableResult
    public func addRoundTripExcess(_ excess: Double, server: String, playbackPort: String, capturePort: String,
                                   reportedCapture: Int? = nil, reportedPlayback: Int? = nil) throws -> LatencyCorrection {
        // A damaged file is not written over (the error names it).
        var all = try ConfigurationFile.read([String: ServerEntry].self, from: path) ?? [:]
        var entry = all[server] ?? ServerEntry()
        let oldCapture = entry.capture[capturePort] ?? 0
        let oldPlayback = entry.playback[playbackPort] ?? 0
        let total = Int((Double(oldCapture + oldPlayback) + excess).rounded())
        var capture = total >= 0 ? total / 2 : -((-total + 1) / 2)
        if let reportedCapture, let reportedPlayback {
            // What JACK says without any correction; corrected sides stay ≥ 0.
            let captureBase = reportedCapture - oldCapture
            let playbackBase = reportedPlayback - oldPlayback
            capture = max(capture, -captureBase)
            if total - capture < -playbackBase { capture = total + playbackBase }
            capture = max(capture, -captureBase)
        }
        entry.capture[capturePort] = capture
        entry.playback[playbackPort] = total - capture
        all[server] = entry
        try save(all)
        return LatencyCorrection(captureFrames: capture, playbackFrames: total - capture)
    }

    private func save(_ all: [String: ServerEntry]) throws {
        try ConfigurationFile.write(all, to: path)
    }
}
