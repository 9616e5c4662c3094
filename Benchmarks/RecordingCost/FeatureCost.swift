import Foundation
import Metering
import Recording
import SoundFile

/// What `jas record` computes beyond what jack_capture does, measured alone
/// on the file `jas record` wrote: the file's SHA-256 for the manifest (read
/// back from the page cache, as the recorder does once the file is closed),
/// and its loudness and true peak (`BlockLoudness` and `TruePeakDetector`,
/// fed in the disk thread's chunks). CPU of this thread only; the file's
/// reading into memory is not counted.
struct FeatureCost {
    let digestSeconds: Double
    let loudnessSeconds: Double
    let truePeakSeconds: Double

    var total: Double { digestSeconds + loudnessSeconds + truePeakSeconds }

    /// Frames per chunk: the disk thread's (every 960 frames at 48 kHz).
    static let chunkFrames = 960

    init(ofFile path: String) throws {
        let reader = try SoundFileReader(path: path)
        let channels = reader.channels
        var blocks = BlockLoudness(channels: channels, sampleRate: reader.sampleRate)
        var peaks = TruePeakDetector(channels: channels, sampleRate: reader.sampleRate, joinsMidStream: true)
        let chunk = UnsafeMutablePointer<Float>.allocate(capacity: Self.chunkFrames * channels)
        defer { chunk.deallocate() }
        var loudness = 0.0, truePeak = 0.0, highest = 0.0
        while true {
            let frames = reader.read(into: chunk, frames: Self.chunkFrames)
            guard frames > 0 else { break }
            loudness += Self.threadCPUSeconds { blocks.add(chunk, frames: frames) }
            truePeak += Self.threadCPUSeconds { highest = max(highest, peaks.highestPeak(chunk, frames: frames, above: highest)) }
        }
        var digest: String?
        digestSeconds = Self.threadCPUSeconds { digest = FileDigest.sha256(ofFile: path) }
        guard digest != nil else { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path]) }
        loudnessSeconds = loudness
        truePeakSeconds = truePeak
    }

    /// CPU time this thread spends in `work`, seconds.
    static func threadCPUSeconds(_ work: () -> Void) -> Double {
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
        work()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
        return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    }
}
