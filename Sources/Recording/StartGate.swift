import Capture

/// Where a take starts. Armed, it keeps the last seconds as pre-roll and
/// waits for the trigger's level or the start command; otherwise the take
/// starts at its first frame. A stage of the take with no thread or file of
/// its own: the disk loop hands it each cycle and gap until it opens.
struct StartGate {
    /// Linear sample level that opens the gate (nil: no trigger).
    let triggerLevel: Float?
    /// Whether it waits for the start command (else it opens at the first frame or the trigger).
    let waitsForStart: Bool
    /// The pre-roll asked for, frames.
    let prerollFrames: Int
    private let channels: Int
    private var history: PrerollHistory

    init(channels: Int, prerollFrames: Int, triggerLevel: Float?, waitsForStart: Bool) {
        self.channels = channels
        self.prerollFrames = prerollFrames
        self.triggerLevel = triggerLevel
        self.waitsForStart = waitsForStart
        history = PrerollHistory(channels: channels, capacityFrames: prerollFrames)
    }

    /// Where the gate opened: the take's first frame (JACK frame time) and the pre-roll before it.
    struct Opening: Equatable {
        let firstFrameTime: UInt32
        let prerollFrames: Int
    }

    /// Where in this cycle the take starts (nil: not in it; the cycle is
    /// kept as pre-roll). `requestedFrame`: the start command's JACK frame
    /// time (nil: none yet).
    mutating func admit(_ header: CycleHeader, _ samples: UnsafeBufferPointer<Float>, requestedFrame: UInt32?) -> Int? {
        if let offset = startOffset(header, samples, requestedFrame: requestedFrame) { return offset }
        history.append(samples, frames: header.frames)
        return nil
    }

    /// A gap while armed: silence in the pre-roll, or (the server restarted)
    /// an empty one, since what it held no longer leads up to now.
    mutating func noteGap(frames: Int, serverRestarted: Bool) {
        if serverRestarted { history.clear() } else { history.appendSilence(frames: frames) }
    }

    /// Opens at frame `offset` of this cycle. The pre-roll is what was kept
    /// plus the cycle's frames before `offset`; hand it on with `releasePreroll`.
    mutating func open(_ header: CycleHeader, _ samples: UnsafeBufferPointer<Float>, offset: Int) -> Opening {
        history.append(UnsafeBufferPointer(rebasing: samples[0..<(offset * channels)]), frames: offset)
        let preroll = min(prerollFrames, history.count)
        return Opening(firstFrameTime: header.frameTime &+ UInt32(offset) &- UInt32(preroll), prerollFrames: preroll)
    }

    /// Calls `body` with the pre-roll's frames, oldest first, then forgets them.
    mutating func releasePreroll(_ body: (UnsafeBufferPointer<Float>, Int) -> Void) {
        history.withNewest(min(prerollFrames, history.count), body)
        history.clear()
    }

    private func startOffset(_ header: CycleHeader, _ samples: UnsafeBufferPointer<Float>, requestedFrame: UInt32?) -> Int? {
        if let triggerLevel {
            for index in 0..<(header.frames * channels) where abs(samples[index]) >= triggerLevel {
                return index / channels
            }
            return nil
        }
        if !waitsForStart { return 0 }
        guard let requestedFrame else { return nil }
        let offset = Int(Int32(bitPattern: requestedFrame &- header.frameTime))
        if offset >= header.frames { return nil }
        return max(0, offset)
    }
}
