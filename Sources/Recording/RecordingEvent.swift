import EventSchema
import Foundation
import Metering

/// Something that happened to a recording, with its place in the file.
/// Positions are frames from the start of the recording's timeline.
public enum RecordingEvent: Sendable, Equatable, Encodable {
    /// The recording began: the first frame's JACK frame time.
    case started(firstFrameTime: UInt32, prerollFrames: Int)
    /// Armed: capturing into the pre-roll, waiting for the start command or trigger.
    case armed(prerollSeconds: Double, triggerDBFS: Double?)
    /// Frames were missing and were written as silence so the timeline stays whole.
    case gap(atFrame: Int64, frames: Int, reason: String, resumedFrameTime: UInt32)
    /// Ports being recorded went away (their client ended, a device was
    /// unplugged): the take hears silence from here.
    case sourceLost(ports: [String], atFrame: Int64)
    /// The silence while recorded ports were away: they came back at
    /// `resumedFrameTime` (nil: the take ended first).
    case sourceGap(atFrame: Int64, frames: Int, ports: [String], resumedFrameTime: UInt32?)
    /// Another session interrupted this one (`by`: its client): capture stops
    /// until the interruption ends and the session is active again.
    case interrupted(by: String, atFrame: Int64)
    /// The interruption ended and capture goes on (`attempts`: activations tried).
    case resumed(attempts: Int)
    /// Reactivating after an interruption was refused; tried again shortly.
    case resumeRefused(reason: String)
    /// The silence an interruption cost (`resumedFrameTime` nil: the take
    /// reached its duration first).
    case interruptionGap(atFrame: Int64, frames: Int, by: String, resumedFrameTime: UInt32?)
    /// Channels (1-based) stayed below the silence threshold for the hold:
    /// silent since `atFrame`, for `silentFrames` so far; their highest level then.
    case silence(channels: [Int], levelDBFS: Double, atFrame: Int64, silentFrames: Int64)
    /// The level of silent channels came back at `atFrame` after `silentFrames`.
    case signal(channels: [Int], levelDBFS: Double, atFrame: Int64, silentFrames: Int64)
    /// A command run for an event (`--on-silence`, `--on-signal`) failed.
    case hookFailed(event: String, command: String, reason: String)
    /// The server reported an xrun at about this position.
    case xrun(atFrame: Int64, delayMicroseconds: Double)
    /// The server went away; the recording waits for it.
    case serverLost(atFrame: Int64, reason: String)
    /// The server came back (its rate, and how long it was gone).
    case serverBack(sampleRate: Int, downtimeSeconds: Double)
    /// The server came back at another rate: the recording goes on in a new file.
    case newFile(path: String, sampleRate: Int, atFrame: Int64)
    /// The take goes on in the next file (`--rotate`), from timeline frame `atFrame`.
    case rotated(path: String, atFrame: Int64)
    /// A file was closed and its loudness measured (also in its `bext` and manifest line).
    case fileLoudness(path: String, FileLoudness)
    /// A later part's name was taken: the next free one is used instead.
    case partSkipped(reason: String)
    /// The sample clock's rate against the wall clock, measured (every minute).
    case clock(rateErrorPPM: Double)
    /// The wall clock was stepped by `seconds` (an NTP step, a person setting
    /// the date): names and times from here use the new clock; no audio moves.
    case clockStep(seconds: Double, atFrame: Int64)
    /// The disk is full: the file so far is closed (valid), and the take goes
    /// on without writing until there is room again.
    case diskFull(atFrame: Int64, path: String)
    /// Frames that could not be written (`reason`: disk-full), not in any
    /// file: logged once writing resumes (`resumed`) or the take ends.
    case unwrittenGap(atFrame: Int64, frames: Int64, reason: String, resumed: Bool)
    /// Retention deleted one of this logger's files: how old it was, and why.
    case deleted(path: String, ageSeconds: Double, reason: String)
    /// Retention could not delete a file.
    case deleteFailed(path: String, reason: String)
    /// A file a killed run left open was put in the manifest by this run.
    case recovered(path: String)
    /// Writing failed (disk full, I/O error): the recording stopped there.
    case writeFailed(atFrame: Int64, reason: String)
    /// The recording ended, and why ("duration reached", "SIGTERM", …).
    case stopped(framesWritten: Int64, reason: String)
    /// This run is the same logger started again in a new process, and why
    /// (the process before could not reach a server any more: its server
    /// registry was replaced). The frames between its last file and this
    /// one's first were not recorded.
    case restarted(reason: String)
    /// A compliance alarm on what the take wrote starts or ends (`jas record --loudness`).
    case loudnessAlarm(LoudnessAlarm.Change, target: LoudnessTarget)

    /// The event as a line of the take's log and of `--json`.
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        switch self {
        case let .started(first, preroll):
            try json.encode("started", forKey: "event")
            try json.encode(first, forKey: "first_frame_time")
            try json.encode(preroll, forKey: "preroll_frames")
        case let .armed(preroll, trigger):
            try json.encode("armed", forKey: "event")
            try json.encode(preroll, forKey: "preroll_seconds")
            try json.encodeOrNull(trigger, forKey: "trigger_dbfs")
        case let .gap(at, frames, reason, resumed):
            try json.encode("gap", forKey: "event")
            try json.encode(at, forKey: "at_frame")
            try json.encode(frames, forKey: "frames")
            try json.encode(reason, forKey: "reason")
            try json.encode(resumed, forKey: "resumed_frame_time")
        case let .sourceLost(ports, at):
            try json.encode("source_lost", forKey: "event")
            try json.encode(ports, forKey: "ports")
            try json.encode(at, forKey: "at_frame")
        case let .sourceGap(at, frames, ports, resumed):
            try json.encode("gap", forKey: "event")
            try json.encode(at, forKey: "at_frame")
            try json.encode(frames, forKey: "frames")
            try json.encode("source-lost", forKey: "reason")
            try json.encode(ports, forKey: "ports")
            try json.encodeOrNull(resumed, forKey: "resumed_frame_time")
            try json.encode(resumed != nil, forKey: "returned")
        case let .interrupted(by, at):
            try json.encode("interrupted", forKey: "event")
            try json.encode(by, forKey: "by")
            try json.encode(at, forKey: "at_frame")
        case let .resumed(attempts):
            try json.encode("resumed", forKey: "event")
            try json.encode(attempts, forKey: "attempts")
        case let .resumeRefused(reason):
            try json.encode("resume_refused", forKey: "event")
            try json.encode(reason, forKey: "reason")
        case let .interruptionGap(at, frames, by, resumed):
            try json.encode("gap", forKey: "event")
            try json.encode(at, forKey: "at_frame")
            try json.encode(frames, forKey: "frames")
            try json.encode("interrupted", forKey: "reason")
            try json.encode(by, forKey: "by")
            try json.encodeOrNull(resumed, forKey: "resumed_frame_time")
        case let .silence(channels, level, at, silent):
            try json.encode("silence", forKey: "event")
            try json.encode(channels, forKey: "channels")
            try json.encodeFigure(level, forKey: "level_dbfs")
            try json.encode(at, forKey: "at_frame")
            try json.encode(silent, forKey: "silent_frames")
        case let .signal(channels, level, at, silent):
            try json.encode("signal", forKey: "event")
            try json.encode(channels, forKey: "channels")
            try json.encodeFigure(level, forKey: "level_dbfs")
            try json.encode(at, forKey: "at_frame")
            try json.encode(silent, forKey: "silent_frames")
        case let .hookFailed(event, command, reason):
            try json.encode("hook_failed", forKey: "event")
            try json.encode(event, forKey: "for")
            try json.encode(command, forKey: "command")
            try json.encode(reason, forKey: "reason")
        case let .xrun(at, delay):
            try json.encode("xrun", forKey: "event")
            try json.encode(at, forKey: "at_frame")
            try json.encode(delay, forKey: "delay_us")
        case let .serverLost(at, reason):
            try json.encode("server_lost", forKey: "event")
            try json.encode(at, forKey: "at_frame")
            try json.encode(reason, forKey: "reason")
        case let .serverBack(rate, downtime):
            try json.encode("server_back", forKey: "event")
            try json.encode(rate, forKey: "sample_rate")
            try json.encode(downtime, forKey: "downtime_seconds")
        case let .newFile(path, rate, at):
            try json.encode("new_file", forKey: "event")
            try json.encode(path, forKey: "path")
            try json.encode(rate, forKey: "sample_rate")
            try json.encode(at, forKey: "at_frame")
        case let .fileLoudness(path, loudness):
            try json.encode("loudness", forKey: "event")
            try json.encode(path, forKey: "path")
            try loudness.encode(to: encoder)
        case let .loudnessAlarm(change, target):
            // The same line as jas meter's.
            try MeterEvent.loudnessAlarm(change, target: target).encode(to: encoder)
        case let .rotated(path, at):
            try json.encode("rotated", forKey: "event")
            try json.encode(path, forKey: "path")
            try json.encode(at, forKey: "at_frame")
        case let .partSkipped(reason):
            try json.encode("part_skipped", forKey: "event")
            try json.encode(reason, forKey: "reason")
        case let .clock(ppm):
            try json.encode("clock", forKey: "event")
            try json.encodeFigure(ppm, forKey: "rate_error_ppm")
        case let .clockStep(seconds, at):
            try json.encode("clock_step", forKey: "event")
            try json.encodeFigure(seconds, decimals: 6, forKey: "seconds")
            try json.encode(at, forKey: "at_frame")
        case let .diskFull(at, path):
            try json.encode("disk_full", forKey: "event")
            try json.encode(at, forKey: "at_frame")
            try json.encode(path, forKey: "path")
        case let .unwrittenGap(at, frames, reason, resumed):
            try json.encode("gap", forKey: "event")
            try json.encode(at, forKey: "at_frame")
            try json.encode(frames, forKey: "frames")
            try json.encode(reason, forKey: "reason")
            try json.encode(false, forKey: "written")
            try json.encode(resumed, forKey: "resumed")
        case let .deleted(path, age, reason):
            try json.encode("deleted", forKey: "event")
            try json.encode(path, forKey: "path")
            try json.encodeFigure(age, decimals: 3, forKey: "age_seconds")
            try json.encode(reason, forKey: "reason")
        case let .deleteFailed(path, reason):
            try json.encode("delete_failed", forKey: "event")
            try json.encode(path, forKey: "path")
            try json.encode(reason, forKey: "reason")
        case let .recovered(path):
            try json.encode("recovered", forKey: "event")
            try json.encode(path, forKey: "path")
        case let .writeFailed(at, reason):
            try json.encode("write_failed", forKey: "event")
            try json.encode(at, forKey: "at_frame")
            try json.encode(reason, forKey: "reason")
        case let .stopped(frames, reason):
            try json.encode("stopped", forKey: "event")
            try json.encode(frames, forKey: "frames_written")
            try json.encode(reason, forKey: "reason")
        case let .restarted(reason):
            try json.encode("restarted", forKey: "event")
            try json.encode(reason, forKey: "reason")
        }
    }

    /// Why frames of the timeline are silence or missing, for a gap event.
    public var gapReason: String? {
        switch self {
        case let .gap(_, _, reason, _), let .unwrittenGap(_, _, reason, _): reason
        case .sourceGap: "source-lost"
        case .interruptionGap: "interrupted"
        default: nil
        }
    }

    /// One line for a person.
    public var text: String {
        switch self {
        case let .started(first, preroll):
            "recording from JACK frame \(first)" + (preroll > 0 ? " (\(preroll) frames of pre-roll)" : "")
        case let .armed(preroll, trigger):
            "armed: pre-roll \(preroll) s" + (trigger.map { ", starting when a sample reaches \($0) dBFS" } ?? "")
        case let .gap(at, frames, reason, _):
            "\(frames) frames missing (\(reason)) at frame \(at): written as silence"
        case let .sourceLost(ports, at):
            "\(ports.joined(separator: ", ")) went away at frame \(at): recording silence until \(ports.count == 1 ? "it comes" : "they come") back"
        case let .sourceGap(at, frames, ports, resumed):
            "\(frames) frames of silence from frame \(at) while \(ports.joined(separator: ", ")) "
                + (resumed == nil ? "never came back" : "\(ports.count == 1 ? "was" : "were") away")
        case let .interrupted(by, at):
            "interrupted by '\(by)' at frame \(at): silence until it ends"
        case let .resumed(attempts):
            "the interruption ended: recording again" + (attempts > 1 ? " (after \(attempts) attempts)" : "")
        case let .resumeRefused(reason):
            "could not resume yet (\(reason)); trying again"
        case let .interruptionGap(at, frames, by, resumed):
            "\(frames) frames of silence from frame \(at) while '\(by)' interrupted"
                + (resumed == nil ? " (until the end of the take)" : "")
        case let .silence(channels, level, at, silent):
            "silence on channel\(channels.count == 1 ? "" : "s") \(channels.map(String.init).joined(separator: ", ")) "
                + "since frame \(at) (\(silent) frames so far, highest \(level.isFinite ? String(format: "%.1f", level) : "-inf") dBFS)"
        case let .signal(channels, level, at, silent):
            "signal back on channel\(channels.count == 1 ? "" : "s") \(channels.map(String.init).joined(separator: ", ")) "
                + "at frame \(at) after \(silent) frames of silence (\(String(format: "%.1f", level)) dBFS)"
        case let .hookFailed(event, command, reason):
            "the command for \(event) ('\(command)') failed: \(reason)"
        case let .xrun(at, delay):
            String(format: "xrun at frame %lld (%.0f µs late)", at, delay)
        case let .serverLost(at, reason):
            "JACK server lost at frame \(at) (\(reason)); waiting for it to come back"
        case let .serverBack(rate, downtime):
            String(format: "JACK server back after %.3f s at %d Hz", downtime, rate)
        case let .newFile(path, rate, at):
            "the server came back at \(rate) Hz: continuing in '\(path)' from frame \(at)"
        case let .fileLoudness(path, loudness):
            "'\(path)' closed: " + [("integrated", loudness.integratedLUFS, "LUFS"), ("LRA", loudness.loudnessRangeLU, "LU"),
                                    ("true peak", loudness.maxTruePeakDBTP, "dBTP")]
                .map { name, figure, unit in "\(name) " + (figure.map { String(format: "%.1f ", $0) + unit } ?? "not measured") }
                .joined(separator: ", ")
        case let .rotated(path, at):
            "continuing in '\(path)' from frame \(at)"
        case let .partSkipped(reason):
            "the next file's name is taken, skipped: \(reason)"
        case let .clock(ppm):
            String(format: "the sample clock runs %+.1f ppm against the wall clock", ppm)
        case let .clockStep(seconds, at):
            String(format: "the wall clock was set %+.3f s at frame %lld: times from here follow it (no audio moved)",
                   seconds, at)
        case let .diskFull(at, path):
            "the disk is full at frame \(at): '\(path)' is closed; recording resumes in a new file when there is room"
        case let .unwrittenGap(at, frames, reason, resumed):
            "\(frames) frames from frame \(at) could not be written (\(reason))" + (resumed ? "; writing again" : "")
        case let .deleted(path, age, reason):
            String(format: "deleted '%@' (%.0f s old): %@", path, age, reason)
        case let .deleteFailed(path, reason):
            "could not delete '\(path)': \(reason)"
        case let .recovered(path):
            "'\(path)', left open by a run that was killed, is now in the manifest"
        case let .writeFailed(at, reason):
            "writing stopped at frame \(at): \(reason)"
        case let .stopped(frames, reason):
            "stopped after \(frames) frames (\(reason))"
        case let .restarted(reason):
            "the logger started again in a new process (\(reason)); the frames in between were not recorded"
        case let .loudnessAlarm(change, target):
            change.on ? String(format: "loudness alarm %@ at %.1f s: %.1f against %.1f (%@)", change.kind.rawValue, change.seconds,
                               change.level, change.threshold, target.name)
                : String(format: "loudness alarm %@ ended at %.1f s after %.1f s", change.kind.rawValue, change.seconds,
                         change.lastedSeconds ?? 0)
        }
    }
}
