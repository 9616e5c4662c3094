import CLoudness

/// Programme loudness by EBU R128 / ITU-R BS.1770-4 and loudness range by EBU
/// Tech 3342 from libebur128 (true peak: `TruePeakDetector`, or libebur128's
/// own when asked for, to compare them). Feed interleaved frames in order; read at any time. Not
/// real-time code and not thread-safe: one worker owns it.
final class ProgrammeLoudness {
    let channels: Int
    private var state: UnsafeMutablePointer<ebur128_state>?
    /// Frames added so far, and the frames of one short-term (3 s) block.
    private var framesAdded = 0
    private let shortTermFrames: Int

    /// A meter for `channels` channels in `layout` (nil: each channel weight 1)
    /// at `sampleRate`; with `truePeak`, libebur128 measures true peak too;
    /// with `windowsOnly`, only `window(milliseconds:)` up to 400 ms (no
    /// gating blocks kept: what metering needs while the programme is paused).
    init(channels: Int, layout: ChannelLayout?, sampleRate: Int, truePeak: Bool = false,
         windowsOnly: Bool = false) throws(MeteringError) {
        self.channels = channels
        shortTermFrames = 3 * sampleRate
        // libebur128's short-term reading sums its whole 3 s window per call, so
        // ProgrammeMeter builds momentary and short-term from 100 ms windows.
        // Not histogram mode: its 0.1 LU bins moved integrated loudness by up to 0.05 LU.
        let mode = windowsOnly ? Int32(EBUR128_MODE_M.rawValue)
            : Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_LRA.rawValue | EBUR128_MODE_S.rawValue
                    | EBUR128_MODE_M.rawValue | (truePeak ? EBUR128_MODE_TRUE_PEAK.rawValue : 0))
        state = channels > 0 && sampleRate > 0 ? ebur128_init(UInt32(channels), UInt(sampleRate), mode) : nil
        guard state != nil else {
            throw .unsupportedStream(channels: channels, sampleRate: sampleRate)
        }
        for (index, position) in layout.positions(channels: channels).enumerated() {
            ebur128_set_channel(state, UInt32(index), Int32(position.rawValue))
        }
    }

    deinit { if state != nil { ebur128_destroy(&state) } }

    /// The most channels libebur128 meters at once (found by asking it, once).
    static let mostChannels: Int = {
        var low = 1, high = 1 << 16
        while low < high {
            let middle = (low + high + 1) / 2
            var probe = ebur128_init(UInt32(middle), 48000, Int32(EBUR128_MODE_M.rawValue))
            if probe != nil {
                ebur128_destroy(&probe)
                low = middle
            } else {
                high = middle - 1
            }
        }
        return low
    }()

    /// Adds `frames` interleaved frames.
    func add(_ samples: UnsafePointer<Float>, frames: Int) {
        guard frames > 0 else { return }
        framesAdded += frames
        ebur128_add_frames_float(state, samples, frames)
    }

    private func read(_ body: (UnsafeMutablePointer<ebur128_state>?, UnsafeMutablePointer<Double>) -> Int32) -> Double? {
        var value = 0.0
        guard body(state, &value) == 0, value.isFinite else { return nil }
        return value
    }

    /// Integrated loudness with the absolute (−70 LUFS) and relative (−10 LU) gates, LUFS.
    var integrated: Double? { read { ebur128_loudness_global($0, $1) } }
    /// Loudness of the last `milliseconds` of audio, LUFS (nil: silence).
    func window(milliseconds: Int) -> Double? { read { ebur128_loudness_window($0, UInt(milliseconds), $1) } }
    /// Loudness range (EBU Tech 3342), LU; nil while nothing is measured:
    /// before the first 3 s short-term block, and while no block passed the
    /// gates (integrated loudness is nil too), where libebur128 says 0.
    var loudnessRange: Double? {
        guard framesAdded >= shortTermFrames, integrated != nil else { return nil }
        return read { ebur128_loudness_range($0, $1) }
    }

    /// Highest true peak of `channel` so far by libebur128 (made with `truePeak`), linear.
    func truePeak(channel: Int) -> Double { read { ebur128_true_peak($0, UInt32(channel), $1) } ?? 0 }
}
