import Foundation
import Synchronization

/// A take's account: the counters a progress display and the summary read,
/// where the last frame written fell (to place xruns), and the gaps the
/// manifest lists. It is their one writer. The disk loop's stages count
/// through it, and so does the recorder when the server reports xruns or
/// the source watch finds ports away. Every method is safe from any thread.
///
/// A counting method that makes the take's timeline reach its limit says so
/// (`true`), once: whoever counted ends the take.
final class TakeLedger: Sendable {
    /// What a progress display reads.
    struct Stats {
        var recording = false
        var finished = false
        var framesWritten: Int64 = 0
        var overruns = 0
        var overrunFrames: Int64 = 0
        var gaps = 0
        var gapFrames: Int64 = 0
        var interruptions = 0
        var interruptionFrames: Int64 = 0
        var xruns = 0
        var peaks: [Float]
        var firstFrameTime: UInt32?
        var prerollFrames = 0
        var timeReference: UInt64?
        var paths: [String]
        var problem: String?
        /// The last frame written: its JACK frame time and file position (to place xruns).
        var anchor: (frameTime: UInt32, position: Int64)?
        /// The silence written for the last time the server's clock stood
        /// still or started again (a stall, a restart): file positions.
        var lastClockGap: Range<Int64>?
        /// The sample clock's rate error against the wall clock (nil: not measured yet).
        var rateErrorPPM: Double?
        /// Frames of the timeline that could not be written (the disk was full): in no file.
        var unwrittenFrames: Int64 = 0
        /// The timeline so far: written frames and unwritten ones.
        var timelineFrames: Int64 { framesWritten + unwrittenFrames }
    }

    /// What a gap of silence written is, besides a gap.
    enum GapKind: Equatable {
        /// The ring overflowed (the disk fell behind).
        case overrun
        /// The session was interrupted.
        case interruption
        /// The server's clock stood still or started again (a stall, a restart).
        case clockStandStill
        /// Anything else (a discontinuity, frames the server skipped).
        case other
    }

    /// Frames to record, then stop (nil: until stopped).
    let limitFrames: Int64?
    private let channels: Int
    private let stats: Mutex<Stats>
    /// Silence written for gaps, timeline positions, until the sets they
    /// fall in are catalogued.
    private let writtenGaps = Mutex<[ManifestLine.Gap]>([])

    init(channels: Int, limitFrames: Int64?) {
        self.channels = channels
        self.limitFrames = limitFrames
        stats = Mutex(Stats(peaks: [Float](repeating: 0, count: channels), paths: []))
    }

    /// The counters as they are now.
    var snapshot: Stats { stats.withLock { $0 } }

    var framesWritten: Int64 { stats.withLock { $0.framesWritten } }

    /// Whether the take has started (the frames written from now on are its own).
    var hasStarted: Bool { stats.withLock { $0.recording } }

    /// Whether it has ended: its limit reached, failed or finished by a command.
    var isFinished: Bool { stats.withLock { $0.finished } }

    /// Started and not ended: what happens now is the take's.
    var isRecording: Bool { stats.withLock { $0.recording && !$0.finished } }

    // MARK: The take's course

    /// The take's first frame (JACK frame time) is written, after `prerollFrames` of pre-roll.
    func started(firstFrameTime: UInt32, prerollFrames: Int) {
        stats.withLock {
            $0.recording = true
            $0.firstFrameTime = firstFrameTime
            $0.prerollFrames = prerollFrames
            $0.anchor = (firstFrameTime, 0)
        }
    }

    /// How many of `frames` the timeline still takes before its limit.
    func allowedFrames(_ frames: Int) -> Int {
        guard let limitFrames else { return frames }
        return Int(max(0, min(Int64(frames), limitFrames - stats.withLock { $0.timelineFrames })))
    }

    /// Ends the take now (a command, a source lost); false if it had ended.
    func finish() -> Bool {
        stats.withLock { stats in
            defer { stats.finished = true }
            return !stats.finished
        }
    }

    /// Writing failed for `problem`: the take has ended; where it stood.
    func failed(_ problem: String) -> Int64 {
        stats.withLock { stats in
            stats.problem = problem
            stats.finished = true
            return stats.framesWritten
        }
    }

    /// A set of files opened.
    func opened(paths: [String]) { stats.withLock { $0.paths += paths } }

    /// The take's first file's TimeReference (samples since midnight), set or revised.
    func timeReference(_ reference: UInt64) { stats.withLock { $0.timeReference = reference } }

    /// The sample clock's rate error, measured again.
    func rateError(ppm: Double?) { stats.withLock { $0.rateErrorPPM = ppm } }

    // MARK: Frames

    /// `frames` frames written with these `peaks`, the last of them ending
    /// at JACK frame time `frameTime` (nil: pre-roll, before the anchor).
    func countWritten(_ frames: Int, peaks: [Float], endingAt frameTime: UInt32?) -> Bool {
        advance(by: frames) { stats in
            for channel in 0..<channels { stats.peaks[channel] = max(stats.peaks[channel], peaks[channel]) }
            if let frameTime { stats.anchor = (frameTime &+ UInt32(frames), stats.framesWritten + Int64(frames)) }
        }
    }

    /// Frames that reached the files before writing failed (a full disk
    /// takes part of a write): on the timeline, so the summary says what the
    /// files hold. The limit is not looked at: the failure ends the take, or
    /// the frames after it are counted as unwritten.
    func countWrittenBeforeFailure(_ frames: Int) {
        stats.withLock { $0.framesWritten += Int64(frames) }
    }

    /// A gap of `frames` frames of which `written` went into the files as
    /// silence, at file position `at`; the timeline resumes at `frameTime`
    /// (nil: the take ends).
    func countGap(at: Int64, frames: Int, written: Int, kind: GapKind, resumedAt frameTime: UInt32?) -> Bool {
        advance(by: written) { stats in
            stats.gaps += 1
            stats.gapFrames += Int64(frames)
            switch kind {
            case .overrun:
                stats.overruns += 1
                stats.overrunFrames += Int64(frames)
            case .interruption:
                stats.interruptions += 1
                stats.interruptionFrames += Int64(frames)
            case .clockStandStill:
                stats.lastClockGap = at..<(at + Int64(frames))
            case .other:
                break
            }
            if let frameTime { stats.anchor = (frameTime, stats.framesWritten + Int64(written)) }
        }
    }

    /// Frames that could not be written (the disk is full): on the timeline, in no file.
    func countUnwritten(_ frames: Int) -> Bool {
        guard frames > 0 else { return false }
        return stats.withLock { stats in
            stats.unwrittenFrames += Int64(frames)
            return reachesLimit(&stats)
        }
    }

    /// The frames a full disk cost, counted as one gap once it is over.
    func countOutage(frames: Int64) {
        stats.withLock {
            $0.gaps += 1
            $0.gapFrames += frames
        }
    }

    /// Counts `count` xruns the server reported, if the take is recording
    /// (not armed, not finished); whether it counted them.
    func countXruns(_ count: Int) -> Bool {
        stats.withLock { stats in
            let counts = stats.recording && !stats.finished
            if counts { stats.xruns += count }
            return counts
        }
    }

    /// Highest peaks since the last call, reset.
    func takePeaks() -> [Float] {
        stats.withLock { stats in
            defer { stats.peaks = [Float](repeating: 0, count: channels) }
            return stats.peaks
        }
    }

    private func advance(by frames: Int, _ update: (inout Stats) -> Void) -> Bool {
        stats.withLock { stats in
            update(&stats)
            stats.framesWritten += Int64(frames)
            return reachesLimit(&stats)
        }
    }

    /// Whether the timeline has just reached the limit (the take ends).
    private func reachesLimit(_ stats: inout Stats) -> Bool {
        guard let limitFrames, stats.timelineFrames >= limitFrames, !stats.finished else { return false }
        stats.finished = true
        return true
    }

    // MARK: Where frames fall

    /// Where JACK frame time `frame` falls in the file (for xruns).
    func position(ofFrameTime frame: UInt32) -> Int64 {
        stats.withLock { stats in
            guard let anchor = stats.anchor else { return stats.framesWritten }
            return max(0, anchor.position + Int64(Int32(bitPattern: frame &- anchor.frameTime)))
        }
    }

    /// Whether the frames written reach past JACK frame time `frame`.
    func hasWritten(past frame: UInt32) -> Bool {
        stats.withLock { stats in stats.anchor.map { Int32(bitPattern: $0.frameTime &- frame) > 0 } ?? false }
    }

    // MARK: The manifest's gaps

    /// Silence written for a gap at timeline position `at`, for the manifest.
    func noteGap(at: Int64, frames: Int, reason: String) {
        writtenGaps.withLock { $0.append(ManifestLine.Gap(atFrame: at, frames: Int64(frames), reason: reason, written: true)) }
    }

    /// Sources gone from file position `at` and back at `end`, found by the
    /// source watch: a gap of the take, counted and listed for the manifest;
    /// where it was placed. Sources gone while the server's clock stood
    /// still (a netjack2 slave's ports, made anew when its master returns)
    /// are gone from where that silence, already logged, ends.
    func noteSourceGap(from at: Int64, to end: Int64) -> (at: Int64, frames: Int) {
        let gap = stats.withLock { stats -> (at: Int64, frames: Int) in
            var start = at
            if let stood = stats.lastClockGap, stood.lowerBound >= start, stood.upperBound <= end { start = stood.upperBound }
            let frames = Int(max(0, end - start))
            stats.gaps += 1
            stats.gapFrames += Int64(frames)
            return (start, frames)
        }
        noteGap(at: gap.at, frames: gap.frames, reason: "source-lost")
        return gap
    }

    /// Each gap's part in the set of files from timeline position `start`
    /// to `end`, positions in the set; the gaps that end there are let go
    /// (one that goes on is kept for the next set).
    func gaps(inSetFrom start: Int64, to end: Int64) -> [ManifestLine.Gap] {
        writtenGaps.withLock { written in
            defer { written.removeAll { $0.atFrame + $0.frames <= end } }
            return written.compactMap { gap in
                let (from, to) = (max(gap.atFrame, start), min(gap.atFrame + gap.frames, end))
                return to > from ? ManifestLine.Gap(atFrame: from - start, frames: to - from, reason: gap.reason, written: true) : nil
            }
        }
    }
}
