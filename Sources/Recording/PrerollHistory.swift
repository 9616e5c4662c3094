/// The last few seconds of captured audio, kept while a recording is armed so
/// that it can start before its start command (pre-roll). Interleaved frames
/// in a circular buffer; the disk thread alone uses it.
struct PrerollHistory {
    let channels: Int
    /// Frames it holds when full.
    let capacityFrames: Int
    private var samples: [Float]
    private var writeFrame = 0
    /// Frames held (at most `capacityFrames`).
    private(set) var count = 0

    init(channels: Int, capacityFrames: Int) {
        self.channels = channels
        self.capacityFrames = capacityFrames
        samples = [Float](repeating: 0, count: max(1, capacityFrames) * channels)
    }

    /// Appends `frames` interleaved frames (only the newest `capacityFrames` stay).
    mutating func append(_ source: UnsafeBufferPointer<Float>, frames: Int) {
        guard capacityFrames > 0 else { return }
        let skip = max(0, frames - capacityFrames)
        for frame in skip..<frames {
            let target = writeFrame * channels
            for channel in 0..<channels { samples[target + channel] = source[frame * channels + channel] }
            writeFrame = (writeFrame + 1) % capacityFrames
        }
        count = min(capacityFrames, count + frames)
    }

    /// Appends `frames` of silence (a gap in the same server's timeline).
    mutating func appendSilence(frames: Int) {
        let zeros = [Float](repeating: 0, count: min(frames, capacityFrames) * channels)
        zeros.withUnsafeBufferPointer { append($0, frames: min(frames, capacityFrames)) }
    }

    /// Empties it (the timeline broke: what it held no longer leads up to now).
    mutating func clear() {
        count = 0
        writeFrame = 0
    }

    /// Calls `body` with the newest `frames` frames (at most `count`), oldest
    /// first, in at most two interleaved pieces.
    func withNewest(_ frames: Int, _ body: (UnsafeBufferPointer<Float>, Int) -> Void) {
        let wanted = min(frames, count)
        guard wanted > 0 else { return }
        let start = (writeFrame - wanted + capacityFrames) % capacityFrames
        samples.withUnsafeBufferPointer { all in
            let first = min(wanted, capacityFrames - start)
            body(UnsafeBufferPointer(rebasing: all[(start * channels)..<((start + first) * channels)]), first)
            if first < wanted {
                body(UnsafeBufferPointer(rebasing: all[0..<((wanted - first) * channels)]), wanted - first)
            }
        }
    }
}
