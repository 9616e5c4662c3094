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

    /// A cycle placed on the timeline, with its step from the one before.
    struct Placed: Equatable {
        var cycle: CycleHeader
        var step: Step
        /// It was held back (`place(_:)`): its frames are the caller's copy.
        var wasHeld: Bool
    }

    /// The sample rate the timeline is kept at, Hz.
    var sampleRate: Int
    private(set) var last: CycleHeader?
    /// Cycles held back, oldest first: the first came after a short gap, the
    /// rest followed it on (see `place(_:)`).
    private var held: [Placed] = []
    /// Frames the first held cycle's frame time is ahead of the one before it,
    /// less what reads already showed to be read ahead.
    private var heldAhead = 0
    /// A held cycle read a frame time already read.
    private var heldReadAgain = false
    /// Cycles held back at most: a client late by this many periods in a row
    /// is an xrun of its own, and its gap stands.
    static let holdLimit = 8

    init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// Places `cycle` and returns the cycles now placed, oldest first: none
    /// while `cycle` is held back, several when held ones are placed with it.
    ///
    /// A callback late past the server's next cycle reads that cycle's frame
    /// time (the server's shared clock), so its own cycle looks one period
    /// after a gap, and the next callback reads the same frame time again
    /// (docs/JACK-FINDINGS.md). Only the cycles after it can tell such a
    /// read from a real gap, so a cycle after a gap of up to four periods is
    /// held back, with the cycles that follow it on. Each read of a frame
    /// time already read makes the gap smaller by as much (to none, most
    /// often) and moves the held cycles' frame times back; the first cycle
    /// that follows on after that places them. Anything else, or the hold
    /// limit, places them as they stepped.
    mutating func place(_ cycle: CycleHeader) -> [Placed] {
        let before = last
        let step = self.step(cycle)
        let current = Placed(cycle: cycle, step: step, wasHeld: false)
        if !held.isEmpty, let before, cycle.epoch == before.epoch, step == .continuous, held.count < Self.holdLimit {
            let readAhead = Int(Int32(bitPattern: before.frameTime &+ UInt32(truncatingIfNeeded: before.frames) &- cycle.frameTime))
            if readAhead > 0 {
                revise(readAhead: readAhead)
            } else if heldReadAgain {
                return releaseHeld() + [current]
            }
            held.append(Placed(cycle: cycle, step: step, wasHeld: true))
            return []
        }
        let released = releaseHeld()
        if let before, case let .gap(_, reason) = step, reason == .discontinuity || reason == .clockJump,
           cycle.epoch == before.epoch {
            let ahead = Int(Int32(bitPattern: cycle.frameTime &- before.frameTime &- UInt32(truncatingIfNeeded: before.frames)))
            if ahead > 0 && ahead <= 4 * before.frames {
                held = [Placed(cycle: cycle, step: step, wasHeld: true)]
                heldAhead = ahead
                return released
            }
        }
        return released + [current]
    }

    /// Places the held cycles as they stand (the take ends, or nothing
    /// comes after them for now).
    mutating func releaseHeld() -> [Placed] {
        defer { (held, heldAhead, heldReadAgain) = ([], 0, false) }
        return held
    }

    /// A cycle read a frame time `readAhead` frames before the one after the
    /// last held: the held ones read theirs as far ahead (as far as their
    /// gap goes): the gap is smaller by as much, their frame times earlier.
    private mutating func revise(readAhead: Int) {
        heldReadAgain = true
        let shift = min(readAhead, heldAhead)
        heldAhead -= shift
        for index in held.indices {
            held[index].cycle.frameTime &-= UInt32(truncatingIfNeeded: shift)
        }
        if case let .gap(frames, reason) = held[0].step {
            let left = reason == .discontinuity ? heldAhead : frames - shift
            held[0].step = left > 0 ? .gap(frames: left, reason: reason) : .continuous
        }
    }

    /// Places `cycle` after the previous one, by the two alone.
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
