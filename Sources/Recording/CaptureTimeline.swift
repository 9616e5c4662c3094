import Capture
/// Keeps a recording's timeline whole: compares each captured cycle with the
/// one before and says how many frames are missing between them and why.
/// Pure: it sees only cycle headers.
struct CaptureTimeline {
    /// Why frames are missing.
    enum GapReason: String, Sendable, Codable {
        /// The ring was full: the disk thread fell behind and cycles were dropped.
        case overrun
        /// The same server skipped frames (an xrun, or the session was inactive).
        case discontinuity
        /// The server went away and a new one (or the same, restarted) came back;
        /// the length is the wall-clock time between the two.
        case serverRestart = "server-restart"
        /// The same server's frame clock jumped while its wall clock says less
        /// than a period went by (seen with jackd's dummy driver, which
        /// restarts its clock after a late cycle); the length is the wall-clock time.
        case clockJump = "clock-jump"
        /// The same server ran no cycles for a while and its frame clock
        /// stood still meanwhile (a netjack2 slave waiting for its master
        /// to come back, a jackd that was stopped); the length is the
        /// wall-clock time it stood still.
        case stall
    }

    /// What a cycle is, relative to the one before.
    enum Step: Equatable {
        /// The first cycle seen.
        case first
        /// It follows on directly.
        case continuous
        /// `frames` are missing before it.
        case gap(frames: Int, reason: GapReason)
    }

    /// The sample rate the timeline is kept at, Hz.
    var sampleRate: Int
    private(set) var last: CycleHeader?

    init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// Places `cycle` after the previous one.
    mutating func step(_ cycle: CycleHeader) -> Step {
        defer { last = cycle }
        guard let last else { return .first }
        let droppedFrames = Int(cycle.droppedBefore &- last.droppedBefore)
        let expectedFrame = last.frameTime &+ UInt32(truncatingIfNeeded: last.frames)
        let frameGap = Int(Int32(bitPattern: cycle.frameTime &- expectedFrame))
        let expectedNanoseconds = Double(last.nanoseconds) + Double(last.frames) * 1e9 / Double(sampleRate)
        let timeGap = (Double(cycle.nanoseconds) - expectedNanoseconds) * Double(sampleRate) / 1e9
        // A cycle runs when its callback does, a little early or late, so
        // only a wall-clock gap far beyond that is a stall.
        let stallFrames = max(Double(sampleRate) / 4, 8 * Double(last.frames))
        if cycle.epoch == last.epoch && frameGap == 0 {
            return timeGap > stallFrames ? .gap(frames: Int(timeGap.rounded()), reason: .stall) : .continuous
        }
        if cycle.epoch == last.epoch && frameGap > 0 {
            if droppedFrames > 0 { return .gap(frames: frameGap, reason: .overrun) }
            // The same server's clock: frame times and wall time agree.
            if abs(Double(frameGap) - timeGap) <= max(0.25 * Double(frameGap), 0.1 * Double(sampleRate)) {
                return .gap(frames: frameGap, reason: .discontinuity)
            }
        }
        // The frame clock jumped while the wall clock says no period was
        // lost: no server comes back that fast. A jump that cost no time
        // (seen on the cycle after every real gap) loses no audio: no gap.
        if cycle.epoch == last.epoch && timeGap < Double(last.frames) {
            let frames = Int(timeGap.rounded())
            return frames > 0 ? .gap(frames: frames, reason: .clockJump) : .continuous
        }
        // A frame time the cycle before already had (or a little less), soon after it: two callbacks
        // read one cycle's frame time, one of them late across the server's cycle boundary (the frame
        // time is the server's shared clock, not the callback's). Each brought a period: none is missing.
        if cycle.epoch == last.epoch && frameGap < 0 && frameGap >= -4 * last.frames && timeGap <= stallFrames {
            return .continuous
        }
        if cycle.epoch == last.epoch && timeGap > stallFrames && (0...Int(stallFrames)).contains(frameGap) {
            return .gap(frames: Int(timeGap.rounded()), reason: .stall)
        }
        return .gap(frames: max(0, Int(timeGap.rounded())), reason: .serverRestart)
    }

    /// Keeps the timeline at a new rate from here on (a new file after a restart at another rate).
    mutating func restart(sampleRate: Int) {
        self.sampleRate = sampleRate
    }
}
