import Measurement

/// What `jas play --signal noise` sends on its first stream (seed 1, −20
/// dBFS), and where it is found again in a recording.
public enum PlayedNoise {
    /// The first `frames` samples the player sends.
    public static func samples(frames: Int, sampleRate: Int = 48000) -> [Float] {
        let generator = SignalGenerator(shape: .noise, levelDBFS: -20, sampleRate: Double(sampleRate), seed: 1)
        var samples = [Float](repeating: 0, count: frames)
        samples.withUnsafeMutableBufferPointer { buffer in
            var pointer: UnsafeMutablePointer<Float>? = buffer.baseAddress
            withUnsafePointer(to: &pointer) { list in
                list.withMemoryRebound(to: UnsafeMutablePointer<Float>.self, capacity: 1) { rebound in
                    generator.render(into: UnsafeBufferPointer(start: rebound, count: 1), frames: frames)
                }
            }
        }
        return samples
    }

    /// How a recording compares with the noise.
    public struct Match {
        /// Samples compared, and how many of them differ from the noise:
        /// silent (zero where the noise is not: nothing was playing into the
        /// recorded port) or differing (another value).
        public var compared = 0
        public var differing = 0
        public var silent = 0
        /// Frames of the recording where the noise went on from another
        /// place than the next sample (a period carried again or skipped
        /// without a gap in the log).
        public var jumps: [Int] = []
        /// The frames from which a stretch's first samples are none of the
        /// player's up to `searchAhead` beyond where the previous stretch ended.
        public var unmatched: [Int] = []
    }

    /// Compares `recorded` from frame `from` on with the noise, stretch by
    /// stretch between `gaps` (silence the recorder wrote: the player's
    /// sequence may have moved on meanwhile, or not, if nobody ran its
    /// cycles). A stretch is found again by its first two non-zero samples,
    /// anywhere up to `searchAhead` frames beyond where the previous one
    /// ended; inside a stretch, a sample that differs is looked for the same
    /// way, and where the noise goes on from there that is a jump, else a
    /// differing sample.
    public static func match(_ recorded: [Float], from: Int, gaps: [Range<Int>], searchAhead: Int) -> Match {
        let stretches = JackTestSupport.stretches(of: from..<max(from, recorded.count),
                                                  between: gaps.filter { $0.lowerBound >= from })
        let noise = samples(frames: recorded.count + searchAhead)
        var places: [UInt32: [Int]] = [:]
        for (index, sample) in noise.enumerated() { places[sample.bitPattern, default: []].append(index) }
        // Where the noise has recorded[at], recorded[at + 1] in a row, before `limit`.
        func place(of at: Int, before limit: Int) -> Int? {
            guard at + 1 < recorded.count, recorded[at] != 0 else { return nil }
            return places[recorded[at].bitPattern]?.first { $0 + 1 < min(limit, noise.count) && noise[$0 + 1] == recorded[at + 1] }
        }
        var result = Match()
        var cursor = 0
        for stretch in stretches {
            guard let first = recorded[stretch].firstIndex(where: { $0 != 0 }) else { continue }
            guard var position = place(of: first, before: cursor + searchAhead) else {
                result.unmatched.append(first)
                continue
            }
            var frame = first
            while frame < stretch.upperBound && position < noise.count {
                if recorded[frame].bitPattern != noise[position].bitPattern {
                    if let elsewhere = place(of: frame, before: noise.count), frame + 1 < stretch.upperBound {
                        result.jumps.append(frame)
                        position = elsewhere
                        continue
                    }
                    if recorded[frame] == 0 { result.silent += 1 } else { result.differing += 1 }
                }
                result.compared += 1
                frame += 1
                position += 1
            }
            cursor = position
        }
        return result
    }
}
