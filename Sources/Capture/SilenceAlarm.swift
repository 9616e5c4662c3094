import Foundation

/// Dead air: says when channels have stayed below a level for a hold time
/// (`silence`), and when their level comes back (`signal`). Channels are
/// watched one by one; channels that change at the same moment are reported
/// together (a stereo feed that goes quiet is one alarm, not two). Pure: it
/// sees each written stretch's per-channel sample peaks and its place on the
/// take's timeline. `jas meter` uses it too, on its readings' peaks.
public struct SilenceAlarm {
    /// A change of state, for one or more channels (1-based).
    public struct Change: Equatable, Sendable {
        public enum Kind: String, Sendable { case silence, signal }
        public var kind: Kind
        public var channels: [Int]
        /// The highest level of those channels: over the silence so far, or
        /// the stretch where the signal came back, dBFS.
        public var levelDBFS: Double
        /// Timeline frame where the silence began, or where the signal returned.
        public var atFrame: Int64
        /// The silence's length: so far (at `silence`, at least the hold) or all of it (at `signal`).
        public var silentFrames: Int64
    }

    let threshold: Float
    let holdFrames: Int64
    /// Per channel: where the level fell below the threshold (nil: it is above),
    /// whether the alarm went off, and the highest level since.
    private var quietSince: [Int64?]
    private var alarmed: [Bool]
    private var quietPeak: [Float]

    public init(channels: Int, thresholdDBFS: Double, holdFrames: Int64) {
        threshold = Float(pow(10, thresholdDBFS / 20))
        self.holdFrames = holdFrames
        quietSince = Array(repeating: nil, count: channels)
        alarmed = Array(repeating: false, count: channels)
        quietPeak = Array(repeating: 0, count: channels)
    }

    /// Takes a stretch of `frames` frames starting at timeline frame `at`
    /// with these per-channel peaks (linear); returns what changed.
    public mutating func observe(peaks: [Float], frames: Int, at: Int64) -> [Change] {
        var silent: [Int] = [], returned: [Int] = []
        var silentLevel: Float = 0, returnedLevel: Float = 0
        var returnedSilence: Int64 = 0
        for channel in peaks.indices {
            let peak = peaks[channel]
            if peak >= threshold {
                if alarmed[channel], let since = quietSince[channel] {
                    returned.append(channel + 1)
                    returnedLevel = max(returnedLevel, peak)
                    returnedSilence = max(returnedSilence, at - since)
                }
                quietSince[channel] = nil
                alarmed[channel] = false
                continue
            }
            if quietSince[channel] == nil {
                quietSince[channel] = at
                quietPeak[channel] = 0
            }
            quietPeak[channel] = max(quietPeak[channel], peak)
            if !alarmed[channel], let since = quietSince[channel], at + Int64(frames) - since >= holdFrames {
                alarmed[channel] = true
                silent.append(channel + 1)
                silentLevel = max(silentLevel, quietPeak[channel])
            }
        }
        var changes: [Change] = []
        if !returned.isEmpty {
            changes.append(Change(kind: .signal, channels: returned, levelDBFS: Self.decibels(returnedLevel),
                                  atFrame: at, silentFrames: returnedSilence))
        }
        if !silent.isEmpty {
            let since = silent.compactMap { quietSince[$0 - 1] }.min() ?? at
            changes.append(Change(kind: .silence, channels: silent, levelDBFS: Self.decibels(silentLevel),
                                  atFrame: since, silentFrames: at + Int64(frames) - since))
        }
        return changes
    }

    static func decibels(_ linear: Float) -> Double { linear > 0 ? 20 * log10(Double(linear)) : -.infinity }
}
