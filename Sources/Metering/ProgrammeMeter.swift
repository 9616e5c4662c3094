import Foundation
import Recording

/// Every meter at once on interleaved frames: programme loudness (libebur128),
/// true peak (`TruePeakDetector`) and, per channel, sample peak, RMS, PPM type I and IIb,
/// VU and K-meter. The same code meters a file and live ports. Not real-time
/// code, and not thread-safe: one worker at a time feeds it what the capture
/// ring delivered (LiveMeter serialises it with a lock).
public final class ProgrammeMeter: @unchecked Sendable {
    /// What to meter and how.
    public struct Configuration: Sendable {
        public var channels: Int
        public var sampleRate: Int
        /// Loudspeaker positions (nil: each channel counts with weight 1).
        public var layout: ChannelLayout?
        /// Names of the channels' sources, for the readings.
        public var sources: [String]
        /// The sine level that reads 0 VU, dBFS.
        public var vuReferenceDBFS = -18.0
        /// The K-meter scale: 12, 14 or 20.
        public var kScale = 14

        public init(channels: Int, sampleRate: Int, layout: ChannelLayout?, sources: [String]) {
            self.channels = channels
            self.sampleRate = sampleRate
            self.layout = layout
            self.sources = sources
        }
    }

    public let configuration: Configuration
    private let loudness: ProgrammeLoudness
    private var truePeaks: TruePeakDetector
    private var programmeTruePeak: [Double]
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
    // The programme.
    private var programmePeak: [Float]
    private var programmeSquares: [Double]
    private var highestPPMI: [Double]
    private var highestPPMIIb: [Double]
    private var highestVU: [Double]
    private var highestK: [Double]
    private var maxMomentary: Double?
    private var maxShortTerm: Double?
    /// Momentary and short-term loudness at the last 100 ms step, LUFS.
    private var momentary: Double?
    private var shortTerm: Double?
    private let loudnessStep: Int
    private var sinceLoudness = 0
    /// Energy (mean square, K-weighted, channel-weighted) of the last 30 windows of 100 ms.
    private var recentEnergies = [Double](repeating: 0, count: 30)
    private var energyIndex = 0

    public init(configuration: Configuration) throws(RecordingError) {
        self.configuration = configuration
        let channels = configuration.channels, rate = configuration.sampleRate
        loudness = try ProgrammeLoudness(channels: channels, layout: configuration.layout, sampleRate: rate)
        loudnessStep = max(1, rate / 10)
        truePeaks = TruePeakDetector(channels: channels, sampleRate: rate)
        programmeTruePeak = Array(repeating: 0, count: channels)
        // Calibrate once, copy per channel.
        ppmI = Array(repeating: PeakProgrammeMeter(kind: .typeI, sampleRate: rate), count: channels)
        ppmIIb = Array(repeating: PeakProgrammeMeter(kind: .typeIIb, sampleRate: rate), count: channels)
        vu = Array(repeating: VolumeUnitMeter(sampleRate: rate, referenceDBFS: configuration.vuReferenceDBFS),
                   count: channels)
        k = Array(repeating: KMeter(scale: configuration.kScale, sampleRate: rate), count: channels)
        intervalPeak = Array(repeating: 0, count: channels)
        intervalTruePeak = Array(repeating: 0, count: channels)
        intervalSquares = Array(repeating: 0, count: channels)
        programmePeak = Array(repeating: 0, count: channels)
        programmeSquares = Array(repeating: 0, count: channels)
        highestPPMI = Array(repeating: -.infinity, count: channels)
        highestPPMIIb = Array(repeating: -.infinity, count: channels)
        highestVU = Array(repeating: -.infinity, count: channels)
        highestK = Array(repeating: -.infinity, count: channels)
    }

    /// Seconds metered so far.
    public var seconds: Double { Double(framesMetered) / Double(configuration.sampleRate) }

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
        let latest = loudness.window(milliseconds: 100).map { pow(10, ($0 + 0.691) / 10) } ?? 0
        recentEnergies[energyIndex % recentEnergies.count] = latest
        energyIndex += 1
        func meanLoudness(_ windows: Int) -> Double? {
            let sum = (0..<windows).reduce(0.0) { $0 + recentEnergies[(energyIndex - 1 - $1 + 30) % 30] }
            return sum > 0 ? -0.691 + 10 * log10(sum / Double(windows)) : nil
        }
        momentary = meanLoudness(4)
        shortTerm = meanLoudness(30)
        if let momentary { maxMomentary = max(maxMomentary ?? -.infinity, momentary) }
        if let shortTerm { maxShortTerm = max(maxShortTerm ?? -.infinity, shortTerm) }
    }

    private func addToMeters(_ samples: UnsafePointer<Float>, frames: Int) {
        guard frames > 0 else { return }
        let channels = configuration.channels
        loudness.add(samples, frames: frames)
        let chunkTruePeaks = truePeaks.peaks(samples, frames: frames)
        for channel in 0..<channels {
            intervalTruePeak[channel] = max(intervalTruePeak[channel], chunkTruePeaks[channel])
            programmeTruePeak[channel] = max(programmeTruePeak[channel], chunkTruePeaks[channel])
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
            programmeSquares[channel] += squares
            programmePeak[channel] = max(programmePeak[channel], peak)
            highestPPMI[channel] = max(highestPPMI[channel], ppmI[channel].decibels)
            highestPPMIIb[channel] = max(highestPPMIIb[channel], ppmIIb[channel].decibels)
            highestVU[channel] = max(highestVU[channel], vu[channel].reading)
            highestK[channel] = max(highestK[channel], k[channel].reading)
        }
        intervalFrames += frames
        framesMetered += Int64(frames)
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

    /// The figures for everything metered so far.
    public func summary() -> MeterSummary {
        let channels = (0..<configuration.channels).map { channel in
            ChannelReading(
                channel: channel + 1, source: source(channel),
                samplePeakDBFS: Self.decibels(Double(programmePeak[channel])),
                truePeakDBTP: Self.decibels(programmeTruePeak[channel]),
                rmsDBFS: Self.rms(programmeSquares[channel], frames: Int(framesMetered)),
                ppmTypeIDBFS: highestPPMI[channel], ppmTypeIIbDBFS: highestPPMIIb[channel],
                vu: highestVU[channel], kMeter: highestK[channel])
        }
        return MeterSummary(
            seconds: seconds, sampleRate: configuration.sampleRate,
            layout: configuration.layout?.rawValue ?? "\(configuration.channels) channels",
            integratedLUFS: loudness.integrated, lraLU: loudness.loudnessRange,
            truePeakDBTP: channels.map(\.truePeakDBTP).max() ?? -.infinity,
            samplePeakDBFS: channels.map(\.samplePeakDBFS).max() ?? -.infinity,
            maxMomentaryLUFS: maxMomentary, maxShortTermLUFS: maxShortTerm, channels: channels)
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
