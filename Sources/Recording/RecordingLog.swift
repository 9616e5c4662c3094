import Foundation

/// Something that happened to a recording, with its place in the file.
/// Positions are frames from the start of the recording's timeline.
public enum RecordingEvent: Sendable, Equatable {
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

    /// The event as one JSON object (snake_case keys).
    public var jsonObject: [String: Any] {
        switch self {
        case let .started(first, preroll):
            ["event": "started", "first_frame_time": first, "preroll_frames": preroll]
        case let .armed(preroll, trigger):
            ["event": "armed", "preroll_seconds": preroll, "trigger_dbfs": trigger as Any? ?? NSNull()]
        case let .gap(at, frames, reason, resumed):
            ["event": "gap", "at_frame": at, "frames": frames, "reason": reason, "resumed_frame_time": resumed]
        case let .sourceLost(ports, at):
            ["event": "source_lost", "ports": ports, "at_frame": at]
        case let .sourceGap(at, frames, ports, resumed):
            ["event": "gap", "at_frame": at, "frames": frames, "reason": "source-lost", "ports": ports,
             "resumed_frame_time": resumed as Any? ?? NSNull(), "returned": resumed != nil]
        case let .interrupted(by, at):
            ["event": "interrupted", "by": by, "at_frame": at]
        case let .resumed(attempts):
            ["event": "resumed", "attempts": attempts]
        case let .resumeRefused(reason):
            ["event": "resume_refused", "reason": reason]
        case let .interruptionGap(at, frames, by, resumed):
            ["event": "gap", "at_frame": at, "frames": frames, "reason": "interrupted", "by": by,
             "resumed_frame_time": resumed as Any? ?? NSNull()]
        case let .silence(channels, level, at, silent):
            ["event": "silence", "channels": channels, "level_dbfs": level.isFinite ? level : -200, "at_frame": at,
             "silent_frames": silent]
        case let .signal(channels, level, at, silent):
            ["event": "signal", "channels": channels, "level_dbfs": level.isFinite ? level : -200, "at_frame": at,
             "silent_frames": silent]
        case let .hookFailed(event, command, reason):
            ["event": "hook_failed", "for": event, "command": command, "reason": reason]
        case let .xrun(at, delay):
            ["event": "xrun", "at_frame": at, "delay_us": delay]
        case let .serverLost(at, reason):
            ["event": "server_lost", "at_frame": at, "reason": reason]
        case let .serverBack(rate, downtime):
            ["event": "server_back", "sample_rate": rate, "downtime_seconds": downtime]
        case let .newFile(path, rate, at):
            ["event": "new_file", "path": path, "sample_rate": rate, "at_frame": at]
        case let .rotated(path, at):
            ["event": "rotated", "path": path, "at_frame": at]
        case let .partSkipped(reason):
            ["event": "part_skipped", "reason": reason]
        case let .clock(ppm):
            ["event": "clock", "rate_error_ppm": (ppm * 100).rounded() / 100]
        case let .clockStep(seconds, at):
            ["event": "clock_step", "seconds": (seconds * 1e6).rounded() / 1e6, "at_frame": at]
        case let .diskFull(at, path):
            ["event": "disk_full", "at_frame": at, "path": path]
        case let .unwrittenGap(at, frames, reason, resumed):
            ["event": "gap", "at_frame": at, "frames": frames, "reason": reason, "written": false, "resumed": resumed]
        case let .deleted(path, age, reason):
            ["event": "deleted", "path": path, "age_seconds": (age * 1000).rounded() / 1000, "reason": reason]
        case let .deleteFailed(path, reason):
            ["event": "delete_failed", "path": path, "reason": reason]
        case let .recovered(path):
            ["event": "recovered", "path": path]
        case let .writeFailed(at, reason):
            ["event": "write_failed", "at_frame": at, "reason": reason]
        case let .stopped(frames, reason):
            ["event": "stopped", "frames_written": frames, "reason": reason]
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
        }
    }
}

/// The sidecar log next to a recording: one JSON object per line, written
/// and flushed as each event happens, so it survives a crash too.
final class RecordingLog: @unchecked Sendable { // the file handle is written only behind `lock`
    let path: String?
    private let lock = NSLock()
    private let handle: FileHandle?

    /// Creates (truncates) the log at `path`; nil: a take without a log
    /// file (to a device), whose events go only to its event stream.
    init(path: String?) throws(RecordingError) {
        self.path = path
        guard let path else {
            handle = nil
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw .unwritablePath(path: path, reason: "cannot create the recording's log file")
        }
        self.handle = handle
    }

    deinit { try? handle?.close() }

    /// Appends `event` with the wall-clock time.
    func append(_ event: RecordingEvent) {
        var object = event.jsonObject
        object["time"] = Date().timeIntervalSince1970
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        lock.lock()
        defer { lock.unlock() }
        try? handle?.write(contentsOf: data + Data("\n".utf8))
    }

    /// The sidecar path for a recording at `outputPath`: its extension
    /// replaced by `.log`; nil when the output is a device (`/dev/null`, a
    /// sound card's node, anything in `/dev`), beside which no file belongs.
    static func path(for outputPath: String) -> String? {
        var info = stat()
        if stat(outputPath, &info) == 0, [S_IFCHR, S_IFBLK].contains(info.st_mode & S_IFMT) { return nil }
        let folder = ((outputPath as NSString).standardizingPath as NSString).deletingLastPathComponent
        if folder == "/dev" || folder.hasPrefix("/dev/") { return nil }
        return (outputPath as NSString).deletingPathExtension + ".log"
    }
}
