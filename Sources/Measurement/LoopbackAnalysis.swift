/// What a recorded loopback run shows: the delay at which the captured signal
/// matches the sent one, and whether every comparable sample matched exactly.
public struct LoopbackAnalysis: Sendable, Equatable {
    /// The round-trip delay found, frames (nil: the sent signal was not found).
    public let delayFrames: Int?
    /// Samples compared (all channels).
    public let samplesCompared: Int
    /// Compared samples that differed from what was sent.
    public let mismatches: Int
    /// Captured samples whose source cycle the session did not run (skipped
    /// cycles after an xrun), so there was nothing to compare them with.
    public let samplesWithoutSource: Int
    /// Recorded cycles whose start did not follow the previous one by one period.
    public let discontinuities: Int
    /// Compared samples that differed from what was sent at the delay but are
    /// what the same channel sent one period earlier or later: a late cycle.
    /// In jackd's asynchronous mode the server does not wait for a late
    /// client. Its next cycle reads the output port while the session is
    /// still writing it (the previous cycle's samples go round again), and
    /// refreshes the input port before the session has read it (the cycle's
    /// own output comes straight back). jackd reports a late client as an
    /// xrun; without one, a displaced sample is a fault.
    public let lateSamples: Int
    /// Channel-periods that came back as exact silence where a sent signal
    /// was due: the server dropped the period without reporting an xrun.
    /// PipeWire does this now and then in a loop through a null sink's
    /// monitor (a plain C client sees it too); jackd has not been seen to.
    /// Their samples are not compared.
    public let dropouts: Int

    /// Every comparable sample matched, apart from samples a late cycle left
    /// stale, and nearly all could be compared. Whether late samples are
    /// excused is the caller's to decide: only when the server reported xruns.
    public var isBitExact: Bool {
        delayFrames != nil && mismatches == 0 && dropouts == 0 && samplesCompared > 0
            && (samplesWithoutSource + lateSamples) * 100 <= samplesCompared
    }

    /// How many of the last cycles may be looked in for the delay.
    static let delayProbes = 8

    /// Analyses `recorder`'s run, looking for a delay up to `maximumDelay` frames.
    public static func analyse(_ recorder: RealtimeLoopbackRecorder, maximumDelay: Int) -> LoopbackAnalysis {
        let cycles = recorder.cyclesRecorded
        let period = recorder.period
        guard cycles > 2, recorder.channels > 0 else {
            return LoopbackAnalysis(delayFrames: nil, samplesCompared: 0, mismatches: 0, samplesWithoutSource: 0,
                                    discontinuities: 0, lateSamples: 0, dropouts: 0)
        }
        // Unwrap JACK's 32-bit frame clock into frames since the first cycle.
        let first = recorder.cycleStarts[0]
        let starts = (0..<cycles).map { Int(recorder.cycleStarts[$0] &- first) }
        let sentCycles = Set(starts)
        let discontinuities = zip(starts, starts.dropFirst()).filter { $1 - $0 != period }.count
        func wasSent(_ frame: Int) -> Bool {
            frame >= 0 && sentCycles.contains(frame - frame % period)
        }
        /// What the session sent on `channel` at `source` frames since the first cycle.
        func sent(channel: Int, _ source: Int) -> Float {
            recorder.signal.sample(channel: channel, frame: first &+ UInt32(truncatingIfNeeded: source))
        }
        func matches(cycle: Int, channel: Int, frame: Int, delay: Int) -> Bool? {
            let source = starts[cycle] + frame - delay
            guard wasSent(source) else { return nil }
            return recorder.capturedSample(cycle: cycle, channel: channel, frame: frame).bitPattern
                == sent(channel: channel, source).bitPattern
        }
        // The delay: the smallest at which a whole cycle of channel 1 matches, in the latest of the last
        // `delayProbes` cycles that has one. A loop that returns a period as silence (PipeWire's null sink
        // monitor, now and then) may do so in the very last cycle: that is a dropout, counted below, not a
        // signal that never came back.
        let delay = (max(0, cycles - Self.delayProbes)..<cycles).reversed().lazy.compactMap { probe in
            (0...maximumDelay).first { delay in
                (0..<period).allSatisfy { matches(cycle: probe, channel: 0, frame: $0, delay: delay) == true }
            }
        }.first
        guard let delay else {
            return LoopbackAnalysis(delayFrames: nil, samplesCompared: 0, mismatches: 0, samplesWithoutSource: 0,
                                    discontinuities: discontinuities, lateSamples: 0, dropouts: 0)
        }
        var compared = 0, mismatches = 0, withoutSource = 0, late = 0, dropouts = 0
        func isDropout(cycle: Int, channel: Int) -> Bool {
            var due = false
            for frame in 0..<period {
                guard recorder.capturedSample(cycle: cycle, channel: channel, frame: frame).bitPattern == 0 else { return false }
                let source = starts[cycle] + frame - delay
                if wasSent(source) { due = due || sent(channel: channel, source) != 0 }
            }
            return due
        }
        for cycle in 0..<cycles {
            for channel in 0..<recorder.channels {
                if isDropout(cycle: cycle, channel: channel) {
                    dropouts += 1
                    continue
                }
                for frame in 0..<period {
                    switch matches(cycle: cycle, channel: channel, frame: frame, delay: delay) {
                    case true?: compared += 1
                    case false?:
                        compared += 1
                        if matches(cycle: cycle, channel: channel, frame: frame, delay: delay + period) == true
                            || (delay >= period
                                && matches(cycle: cycle, channel: channel, frame: frame, delay: delay - period) == true) {
                            late += 1
                        } else {
                            mismatches += 1
                        }
                    case nil: if starts[cycle] + frame - delay >= 0 { withoutSource += 1 }
                    }
                }
            }
        }
        return LoopbackAnalysis(delayFrames: delay, samplesCompared: compared, mismatches: mismatches,
                                samplesWithoutSource: withoutSource, discontinuities: discontinuities,
                                lateSamples: late, dropouts: dropouts)
    }
}
