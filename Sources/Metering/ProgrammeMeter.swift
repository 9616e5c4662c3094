import Foundation

/// Every meter at once on interleaved frames: programme loudness (libebur128),
/// true peak (`TruePeakDetector`) and, per channel, sample peak, RMS, PPM type I and IIb,
/// VU and K-meter. The same code meters a file and live ports. Not real-time
/// code, and not thread-safe: one worker at a time feeds it what the capture
/// ring delivered (LiveMeter serialises it with a lock).
public final class ProgrammeMeter: @unchecked Sendable { // not thread-safe by design: its owner feeds it from one thread at a time (IntervalMeter, under a lock)
    /// What to meter and how.
    public struct Configuration: Sendable {
        /// Channels metered.
        public var channels: Int
        /// Frames a second.
        public var sampleRate: Int
        /// Loudspeaker positions (nil: each channel counts with weight 1).
        public var layout: ChannelLayout?
        /// Names of the channels' sources, for the readings.
        public var sources: [String]
        /// The sine level that reads 0 VU, dBFS.
        public var vuReferenceDBFS = -18.0
        /// The K-meter scale: 12, 14 or 20.
        public var kScale = 14
        /// The programme began before the first sample metered (live metering):
        /// the true peak does not count a step out of the silence before it.
        public var joinsMidStream = false

        /// What to meter: `channels` at `sampleRate`, laid out as `layout` (nil: each channel weighs 1), read from `sources`.
        public init(channels: Int, sampleRate: Int, layout: ChannelLayout?, sources: [String]) {
            self.channels = channels
            self.sampleRate = sampleRate
            self.layout = layout
            self.sources = sources
        }
    }

    public let configuration: Configuration
    /// Gated loudness and LRA of the programme (fed while not paused).
    private var loudness: ProgrammeLoudness
    /// Momentary windows while the programme is paused (nil otherwise: `loudness` gives them).
    private var pausedWindows: ProgrammeLoudness?
    private var truePeaks: TruePeakDetector
    private var ppmI: [PeakProgrammeMeter]
    private var ppmIIb: [PeakProgrammeMeter]
    private var vu: [VolumeUnitMeter]
    private var k: [KMeter]
    private var framesMetered: Int64 = 0
    // The interval under way.
    private var intervalPeak: [Float]
    private var intervalTruePeak: [Double]
    private var intervalSquares: [Double]
    private var intervalFrames = 0
    /// The programme's figures since the start or the last reset.
    private var programme: ProgrammeTotals
    /// Momentary and short-term loudness at the last 100 ms step, LUFS.
    private var momentary: Double?
    private var shortTerm: Double?
    private let loudnessStep: Int
    private var sinceLoudness = 0
    /// Energy (mean square, K-weighted, channel-weighted) of the last 30 windows of 100 ms.
    private var recentEnergies = [Double](repeating: 0, count: 30)
    private var energyIndex = 0
    /// A reset or pause asked for, applied at the next 100 ms step.
    private var pendingReset = false
    private var pendingPause: Bool?

    /// A meter for `configuration`; throws when it cannot be metered (no channels, a rate or layout refused).
    public init(configuration: Configuration) throws(MeteringError) {
        self.configuration = configuration
        let channels = configuration.channels, rate = configuration.sampleRate
        loudness = try ProgrammeLoudness(channels: channels, layout: configuration.layout, sampleRate: rate)
        loudnessStep = max(1, rate / 10)
        truePeaks = TruePeakDetector(channels: channels, sampleRate: rate, joinsMidStream: configuration.joinsMidStream)
        programme = ProgrammeTotals(channels: channels)
        // Calibrate once, copy per channel.
        ppmI = Array(repeating: PeakProgrammeMeter(kind: .typeI, sampleRate: rate), count: channels)
        ppmIIb = Array(repeating: PeakProgrammeMeter(kind: .typeIIb, sampleRate: rate), count: channels)
        vu = Array(repeating: VolumeUnitMeter(sampleRate: rate, referenceDBFS: configuration.vuReferenceDBFS),
                   count: channels)
        k = Array(repeating: KMeter(scale: configuration.kScale, sampleRate: rate), count: channels)
        intervalPeak = Array(repeating: 0, count: channels)
        intervalTruePeak = Array(repeating: 0, count: channels)
        intervalSquares = Array(repeating: 0, count: channels)
    }

    /// Seconds metered so far.
    public var seconds: Double { Double(framesMetered) / Double(configuration.sampleRate) }

    /// Seconds in the programme's figures: since the start or the last reset, less the pauses.
    public var programmeSeconds: Double { Double(programme.frames) / Double(configuration.sampleRate) }

    /// Whether the programme's figures are paused (readings go on).
    public private(set) var isPaused = false

    /// Starts the programme again at the next 100 ms step: integrated
    /// loudness, LRA, the maxima and the programme's peaks cover only what
    /// comes after. Momentary and short-term loudness and the ballistic
    /// meters go on (they are windows on the signal, not the programme).
    public func resetProgramme() { pendingReset = true }

    /// Pauses or resumes the programme's figures at the next 100 ms step:
    /// what plays while paused does not count in them; readings go on.
    public func setProgrammePaused(_ paused: Bool) { pendingPause = paused }

    /// Meters `frames` interleaved frames.
    public func add(_ samples: UnsafePointer<Float>, frames: Int) {
        // Momentary and short-term loudness are sampled every 100 ms of audio
        // (libebur128 sums its whole window for each, so not per period).
        var offset = 0
        while offset < frames {
            let take = min(frames - offset, loudnessStep - sinceLoudness)
            addToMeters(samples + offset * configuration.channels, frames: take)
            offset += take
            sinceLoudness += take
            if sinceLoudness == loudnessStep {
                sinceLoudness = 0
                sampleLoudness()
            }
        }
    }

    /// Updates momentary (400 ms) and short-term (3 s) loudness from the last
    /// 100 ms window's energy and the 29 before it (windows are disjoint, so
    /// their mean energy is the longer window's), and keeps their maxima.
    private func sampleLoudness() {
        let latest = (pausedWindows ?? loudness).window(milliseconds: 100).map { pow(10, ($0 + 0.691) / 10) } ?? 0
        recentEnergies[energyIndex % recentEnergies.count] = latest
        energyIndex += 1
        func meanLoudness(_ windows: Int) -> Double? {
            let sum = (0..<windows).reduce(0.0) { $0 + recentEnergies[(energyIndex - 1 - $1 + 30) % 30] }
            return sum > 0 ? -0.691 + 10 * log10(sum / Double(windows)) : nil
        }
        momentary = meanLoudness(4)
        shortTerm = meanLoudness(30)
        if !isPaused {
            if let momentary { programme.maxMomentary = max(programme.maxMomentary ?? -.infinity, momentary) }
            if let shortTerm { programme.maxShortTerm = max(programme.maxShortTerm ?? -.infinity, shortTerm) }
        }
        applyRequests()
    }

    /// Applies a reset or pause asked for since the last step: at a step, so
    /// that every 100 ms window is read from one libebur128 state.
    private func applyRequests() {
        let rate = configuration.sampleRate, channels = configuration.channels, layout = configuration.layout
        if pendingReset, let fresh = try? ProgrammeLoudness(channels: channels, layout: layout, sampleRate: rate) {
            loudness = fresh
            programme = ProgrammeTotals(channels: channels)
        }
        pendingReset = false
        if let pause = pendingPause, pause != isPaused {
            isPaused = pause
            pausedWindows = pause ? try? ProgrammeLoudness(channels: channels, layout: layout, sampleRate: rate,
                                                           windowsOnly: true) : nil
        }
        pendingPause = nil
    }

    private func addToMeters(_ samples: UnsafePointer<Float>, frames: Int) {
        guard frames > 0 else { return }
        let channels = configuration.channels
        if let pausedWindows {
            pausedWindows.add(samples, frames: frames)
        } else {
            loudness.add(samples, frames: frames)
        }
        let counts = !isPaused
        let chunkTruePeaks = truePeaks.peaks(samples, frames: frames)
        for channel in 0..<channels {
            intervalTruePeak[channel] = max(intervalTruePeak[channel], chunkTruePeaks[channel])
            // Local copies: the per-sample loop touches no array (no
            // uniqueness or exclusivity check per sample).
            var peak = intervalPeak[channel]
            var squares = 0.0
            var typeI = ppmI[channel], typeIIb = ppmIIb[channel], volume = vu[channel], kMeter = k[channel]
            var index = channel
            for _ in 0..<frames {
                let sample = samples[index]
                peak = max(peak, abs(sample))
                squares += Double(sample) * Double(sample)
                typeI.process(sample)
                typeIIb.process(sample)
                volume.process(sample)
                kMeter.process(sample)
                index += channels
            }
            ppmI[channel] = typeI
            ppmIIb[channel] = typeIIb
            vu[channel] = volume
            k[channel] = kMeter
            intervalPeak[channel] = peak
            intervalSquares[channel] += squares
            if counts {
                programme.add(channel: channel, peak: peak, truePeak: chunkTruePeaks[channel], squares: squares,
                              ppmI: typeI.decibels, ppmIIb: typeIIb.decibels, vu: volume.reading, k: kMeter.reading)
            }
        }
        intervalFrames += frames
        framesMetered += Int64(frames)
        if counts { programme.frames += Int64(frames) }
    }

    /// The figures for the interval since the previous reading (which it ends).
    public func reading() -> MeterReading {
        let channels = (0..<configuration.channels).map { channel in
            ChannelReading(
                channel: channel + 1, source: source(channel),
                samplePeakDBFS: Self.decibels(Double(intervalPeak[channel])),
                truePeakDBTP: Self.decibels(intervalTruePeak[channel]),
                rmsDBFS: Self.rms(intervalSquares[channel], frames: intervalFrames),
                ppmTypeIDBFS: ppmI[channel].decibels, ppmTypeIIbDBFS: ppmIIb[channel].decibels,
                vu: vu[channel].reading, kMeter: k[channel].reading)
        }
        for channel in 0..<configuration.channels {
            intervalPeak[channel] = 0
            intervalTruePeak[channel] = 0
            intervalSquares[channel] = 0
        }
        intervalFrames = 0
        return MeterReading(seconds: seconds, momentaryLUFS: momentary, shortTermLUFS: shortTerm,
                            integratedLUFS: loudness.integrated, loudnessRangeLU: loudness.loudnessRange,
                            channels: channels)
    }

    /// The figures for the programme: everything metered so far, or since
    /// the last reset, less the pauses.
    public func summary() -> MeterSummary {
        let channels = (0..<configuration.channels).map { channel in
            ChannelReading(
                channel: channel + 1, source: source(channel),
                samplePeakDBFS: Self.decibels(Double(programme.peak[channel])),
                truePeakDBTP: Self.decibels(programme.truePeak[channel]),
                rmsDBFS: Self.rms(programme.squares[channel], frames: Int(programme.frames)),
                ppmTypeIDBFS: programme.highestPPMI[channel], ppmTypeIIbDBFS: programme.highestPPMIIb[channel],
                vu: programme.highestVU[channel], kMeter: programme.highestK[channel])
        }
        return MeterSummary(
            seconds: seconds, programmeSeconds: programmeSeconds, sampleRate: configuration.sampleRate,
            layout: configuration.layout?.rawValue ?? "\(configuration.channels) channels",
            integratedLUFS: loudness.integrated, lraLU: loudness.loudnessRange,
            truePeakDBTP: channels.map(\.truePeakDBTP).max() ?? -.infinity,
            samplePeakDBFS: channels.map(\.samplePeakDBFS).max() ?? -.infinity,
            maxMomentaryLUFS: programme.maxMomentary, maxShortTermLUFS: programme.maxShortTerm, channels: channels)
    }

    private func source(_ channel: Int) -> String {
        channel < configuration.sources.count ? configuration.sources[channel] : "channel \(channel + 1)"
    }

    static func decibels(_ linear: Double) -> Double { linear > 0 ? 20 * log10(linear) : -.infinity }

    /// AES17 RMS: a full-scale sine is 0 dBFS.
    static func rms(_ squares: Double, frames: Int) -> Double {
        frames > 0 && squares > 0 ? 10 * log10(2 * squares / Double(frames)) : -.infinity
    }
}

/// The figures a programme accumulates (what a reset starts again).
private struct ProgrammeTotals {
    var frames: Int64 = 0
    var peak: [Float]
    var truePeak: [Double]
    var squares: [Double]
    var highestPPMI: [Double]
    var highestPPMIIb: [Double]
    var highestVU: [Double]
    var highestK: [Double]
    var maxMomentary: Double?
    var maxShortTerm: Double?

    init(channels: Int) {
        peak = Array(repeating: 0, count: channels)
        truePeak = Array(repeating: 0, count: channels)
        squares = Array(repeating: 0, count: channels)
        highestPPMI = Array(repeating: -.infinity, count: channels)
        highestPPMIIb = Array(repeating: -.infinity, count: channels)
        highestVU = Array(repeating: -.infinity, count: channels)
        highestK = Array(repeating: -.infinity, count: channels)
    }

    mutating func add(channel: Int, peak: Float, truePeak: Double, squares: Double, ppmI: Double, ppmIIb: Double,
                      vu: Double, k: Double) {
        self.peak[channel] = max(self.peak[channel], peak)
        self.truePeak[channel] = max(self.truePeak[channel], truePeak)
        self.squares[channel] += squares
        highestPPMI[channel] = max(highestPPMI[channel], ppmI)
        highestPPMIIb[channel] = max(highestPPMIIb[channel], ppmIIb)
        highestVU[channel] = max(highestVU[channel], vu)
        highestK[channel] = max(highestK[channel], k)
    }
}
