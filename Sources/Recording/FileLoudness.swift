import EventSchema
import Foundation
import Metering

/// EBU Tech 3285's five loudness figures of one recorded file, measured
/// over exactly the frames written to it (gaps' silence included) by the
/// meter `jas meter` uses. A figure the file is too short or too quiet for
/// is nil: `bext` says "not set" (0x7FFF) and JSON says null, never a made-up number.
public struct FileLoudness: Sendable, Equatable, Codable {
    /// Integrated loudness (BS.1770 gates), LUFS.
    public var integratedLUFS: Double?
    /// Loudness range (EBU Tech 3342), LU.
    public var loudnessRangeLU: Double?
    /// Highest true peak over the file's channels, dBTP.
    public var maxTruePeakDBTP: Double?
    /// Highest momentary (400 ms) and short-term (3 s) loudness, LUFS.
    public var maxMomentaryLUFS: Double?
    /// Highest short-term loudness (3 s), LUFS.
    public var maxShortTermLUFS: Double?

    /// A file's figures, each nil where the audio gave none.
    public init(integratedLUFS: Double?, loudnessRangeLU: Double?, maxTruePeakDBTP: Double?, maxMomentaryLUFS: Double?,
                maxShortTermLUFS: Double?) {
        self.integratedLUFS = integratedLUFS
        self.loudnessRangeLU = loudnessRangeLU
        self.maxTruePeakDBTP = maxTruePeakDBTP
        self.maxMomentaryLUFS = maxMomentaryLUFS
        self.maxShortTermLUFS = maxShortTermLUFS
    }

    /// EBU Tech 3285's "not set" value of a loudness field.
    public static let notSet: Int16 = 0x7FFF

    /// The five `bext` fields in their order (LoudnessValue, LoudnessRange,
    /// MaxTruePeakLevel, MaxMomentaryLoudness, MaxShortTermLoudness): the
    /// figure × 100, rounded; "not set" when there is none or it does not fit.
    public var broadcastFields: [Int16] {
        [integratedLUFS, loudnessRangeLU, maxTruePeakDBTP, maxMomentaryLUFS, maxShortTermLUFS].map { figure in
            guard let figure, let hundredths = Int16(exactly: (figure * 100).rounded()), hundredths != Self.notSet
            else { return Self.notSet }
            return hundredths
        }
    }

    private enum CodingKeys: String, CodingKey {
        case integratedLUFS = "integrated_lufs", loudnessRangeLU = "lra_lu", maxTruePeakDBTP = "max_true_peak_dbtp",
             maxMomentaryLUFS = "max_momentary_lufs", maxShortTermLUFS = "max_short_term_lufs"
    }

    /// Every figure, null where there is none (0.01 dB, as `bext` holds them).
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: CodingKeys.self)
        for (figure, key) in [(integratedLUFS, CodingKeys.integratedLUFS), (loudnessRangeLU, .loudnessRangeLU),
                              (maxTruePeakDBTP, .maxTruePeakDBTP), (maxMomentaryLUFS, .maxMomentaryLUFS),
                              (maxShortTermLUFS, .maxShortTermLUFS)] {
            try json.encode(Figure.rounded(figure, decimals: 2), forKey: key)
        }
    }
}

/// Meters a file as the disk thread writes it: loudness from 100 ms blocks
/// (`BlockLoudness`), true peak as `jas meter` reads it. A file starts mid-programme
/// (a rotation cuts a running signal), so its first sample is not a step
/// out of silence for the true peak. Momentary loudness needs 400 ms of the
/// file and short-term loudness 3 s: a shorter file has none of that kind
/// (where the meter would pad its window with silence).
final class FileLoudnessMeter {
    private var blocks: BlockLoudness
    private var truePeaks: TruePeakDetector
    /// The highest true peak so far over every channel, linear.
    private var truePeak = 0.0
    private let sampleRate: Int
    private var frames = 0

    init(channels: Int, sampleRate: Int) {
        self.sampleRate = sampleRate
        blocks = BlockLoudness(channels: channels, sampleRate: sampleRate)
        truePeaks = TruePeakDetector(channels: channels, sampleRate: sampleRate, joinsMidStream: true)
    }

    func add(_ samples: UnsafePointer<Float>, frames: Int) {
        guard frames > 0 else { return }
        self.frames += frames
        blocks.add(samples, frames: frames)
        truePeak = max(truePeak, truePeaks.highestPeak(samples, frames: frames, above: truePeak))
    }

    var loudness: FileLoudness {
        var measured = FileLoudness(integratedLUFS: blocks.integratedLUFS, loudnessRangeLU: blocks.loudnessRangeLU,
                                    maxTruePeakDBTP: truePeak > 0 ? 20 * log10(truePeak) : nil,
                                    maxMomentaryLUFS: blocks.maxMomentaryLUFS, maxShortTermLUFS: blocks.maxShortTermLUFS)
        let seconds = Double(frames) / Double(sampleRate)
        if seconds < 3 { (measured.maxShortTermLUFS, measured.loudnessRangeLU) = (nil, nil) }
        if seconds < 0.4 { (measured.maxMomentaryLUFS, measured.integratedLUFS) = (nil, nil) }
        return measured
    }
}
