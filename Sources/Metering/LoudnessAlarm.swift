import Foundation

/// A loudness a programme must keep: a target with a tolerance for its
/// loudness, and a ceiling for its true peak.
public struct LoudnessTarget: Sendable, Equatable {
    /// The standard's name, or "target" for one given by number.
    public var name: String
    /// The integrated loudness aimed at, LUFS.
    public var targetLUFS: Double
    /// How far the short-term loudness may stray from the target, LU.
    public var toleranceLU: Double
    /// The highest true peak allowed, dBTP.
    public var maxTruePeakDBTP: Double

    /// A target by its figures; `name` labels it in events and logs.
    public init(name: String = "target", targetLUFS: Double, toleranceLU: Double, maxTruePeakDBTP: Double) {
        self.name = name
        self.targetLUFS = targetLUFS
        self.toleranceLU = toleranceLU
        self.maxTruePeakDBTP = maxTruePeakDBTP
    }

    /// EBU R128: −23 LUFS ±1 LU, true peak at most −1 dBTP.
    public static let r128 = LoudnessTarget(name: "r128", targetLUFS: -23, toleranceLU: 1, maxTruePeakDBTP: -1)
    /// ATSC A/85: −24 LKFS ±2 dB, true peak at most −2 dBTP.
    public static let a85 = LoudnessTarget(name: "a85", targetLUFS: -24, toleranceLU: 2, maxTruePeakDBTP: -2)

    /// The standard a name says, as people write it (`r128`, `EBU`,
    /// `atsc-a85`, ...); nil for a name it does not know.
    public static func named(_ name: String) -> LoudnessTarget? {
        switch name.lowercased() {
        case "r128", "ebu-r128", "ebu": .r128
        case "a85", "atsc-a85", "atsc": .a85
        default: nil
        }
    }
}

extension LoudnessTarget: CustomStringConvertible {
    /// The target as people read it: `r128: -23.0 LUFS ±1.0 LU, true peak ≤ -1.0 dBTP`.
    public var description: String {
        String(format: "%@: %.1f LUFS ±%.1f LU, true peak ≤ %.1f dBTP", name, targetLUFS, toleranceLU, maxTruePeakDBTP)
    }
}

/// Compliance alarms on a meter's readings, with hysteresis so a level
/// that hovers at a threshold does not flap:
///
/// - `tooLoud` / `tooQuiet`: the short-term loudness stays above the target
///   plus the tolerance (below it less the tolerance) for the hold time;
///   it ends once the level has stayed `hysteresisLU` inside the band for
///   the hold time. Readings below the −70 LUFS gate (silence: dead air's
///   alarm) raise no `tooQuiet`, do not end one, and end a `tooLoud`; nor
///   do the first 3 s, while the short-term window fills.
/// - `truePeakOver`: a true peak over the ceiling starts it at once; it
///   ends after the hold time without one.
///
/// Pure: it sees each reading's end on the meter's timeline (seconds of
/// audio metered), its short-term loudness and its highest true peak.
public struct LoudnessAlarm: Sendable {
    /// What an alarm is about.
    public enum Kind: String, Sendable, CaseIterable {
        /// Short-term loudness above the tolerance, below it, or a true peak over the maximum.
        case tooLoud = "too_loud", tooQuiet = "too_quiet", truePeakOver = "true_peak_over"
    }

    /// An alarm that starts (`on`) or ends.
    public struct Change: Sendable, Equatable {
        /// What the alarm is about.
        public var kind: Kind
        /// True when the alarm starts, false when it ends.
        public var on: Bool
        /// Where the condition began (at the start: the first reading past
        /// the threshold; at the end: the first reading back inside), seconds of audio.
        public var sinceSeconds: Double
        /// The reading that decided it, seconds of audio.
        public var seconds: Double
        /// The worst level of the alarm so far (LUFS, or dBTP for a true peak).
        public var level: Double
        /// The threshold it was judged against: where it starts (on) or ends (off).
        public var threshold: Double
        /// At its end: how long it was on (from the reading that started it), seconds.
        public var lastedSeconds: Double?
    }

    /// The target the readings are judged against.
    public let target: LoudnessTarget
    /// How long a loudness condition must last before its alarm starts, and be gone before it ends, seconds of audio.
    public let holdSeconds: Double
    /// How far inside the tolerance the loudness must stay for a loudness alarm to end, LU (at most the tolerance).
    public let hysteresisLU: Double

    private struct Track {
        var on = false
        /// Since when the condition to change has held (nil: it does not).
        var since: Double?
        var worst = -Double.infinity
        /// The reading that started it.
        var onAt = 0.0
    }
    private var tracks: [Kind: Track] = [:]

    /// An alarm with no alarm on, judging against `target`.
    public init(target: LoudnessTarget, holdSeconds: Double, hysteresisLU: Double = 0.5) {
        self.target = target
        self.holdSeconds = holdSeconds
        self.hysteresisLU = min(hysteresisLU, target.toleranceLU)
    }

    /// Which alarms are on now.
    public var active: [Kind] { Kind.allCases.filter { tracks[$0]?.on == true } }

    /// The threshold a kind starts at (`on`) or ends at.
    public func threshold(_ kind: Kind, on: Bool) -> Double {
        let margin = on ? 0 : hysteresisLU
        switch kind {
        case .tooLoud: return target.targetLUFS + target.toleranceLU - margin
        case .tooQuiet: return target.targetLUFS - target.toleranceLU + margin
        case .truePeakOver: return target.maxTruePeakDBTP
        }
    }

    /// BS.1770's absolute gate: a short-term loudness below it is silence
    /// (or a filter's tail after it), not a programme that is too quiet.
    public static let gateLUFS = -70.0

    /// The short-term window: before this much audio was metered it is not full, and judges nothing.
    public static let windowSeconds = 3.0

    /// Takes the reading that ends at `seconds`; returns what changed.
    public mutating func observe(seconds: Double, shortTermLUFS measured: Double?, truePeakDBTP: Double) -> [Change] {
        let full = seconds >= Self.windowSeconds - 1e-9
        let shortTermLUFS = measured.flatMap { $0 >= Self.gateLUFS && full ? $0 : nil }
        var changes: [Change] = []
        for kind in Kind.allCases {
            var track = tracks[kind] ?? Track()
            defer { tracks[kind] = track }
            let level: Double?
            let past: Bool  // past the threshold that changes the state
            switch kind {
            case .tooLoud:
                level = shortTermLUFS
                past = track.on ? (shortTermLUFS ?? -.infinity) <= threshold(kind, on: false)
                    : (shortTermLUFS ?? -.infinity) > threshold(kind, on: true)
            case .tooQuiet:
                level = shortTermLUFS.map { -$0 }
                past = shortTermLUFS.map { track.on ? $0 >= threshold(kind, on: false) : $0 < threshold(kind, on: true) } ?? false
            case .truePeakOver:
                level = truePeakDBTP.isFinite ? truePeakDBTP : nil
                past = track.on ? truePeakDBTP <= threshold(kind, on: true) : truePeakDBTP > threshold(kind, on: true)
            }
            if track.on, let level { track.worst = max(track.worst, level) }
            guard past else {
                track.since = nil
                continue
            }
            // While it waits to start: the worst since the condition began.
            if !track.on, let level { track.worst = track.since == nil ? level : max(track.worst, level) }
            let since = track.since ?? seconds
            track.since = since
            // A true peak over starts its alarm at once; everything else waits for the hold.
            let held = kind == .truePeakOver && !track.on ? true : seconds - since >= holdSeconds - 1e-9
            guard held else { continue }
            track.on.toggle()
            track.since = nil
            if track.on { track.onAt = seconds }
            let worst = kind == .tooQuiet ? -track.worst : track.worst
            changes.append(Change(kind: kind, on: track.on, sinceSeconds: since, seconds: seconds, level: worst,
                                  threshold: threshold(kind, on: track.on), lastedSeconds: track.on ? nil : seconds - track.onAt))
        }
        return changes
    }
}
