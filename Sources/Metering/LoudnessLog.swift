import EventSchema
import Foundation
import JackRuntime
import Synchronization
import SystemPackage

/// A loudness compliance log for long unattended runs: the lines of
/// `ClockedLoudness` (an `interval` line on each of the clock's boundaries,
/// an `hour` and a `day` line with their integrated loudness and range, a
/// `gap` for clock time without readings), a line for every reset and
/// pause, and whatever else the meter notes (its alarms, dead air, the
/// server's loss and return). Appended and flushed line by line, so a day's
/// log survives a crash or a restart of the meter; an existing log is
/// continued, never replaced. Without a path it writes nothing and only
/// hands its lines on (`onLine`: the live page's hour and day).
public final class LoudnessLog: Sendable {
    /// The log file (nil: lines are only handed on).
    public let path: String?
    /// Length of an interval line, seconds of clock time.
    public let intervalSeconds: Double
    /// The log, open for appending (nil: no path).
    private let file: FileDescriptor?
    /// What is gathered for the lines under way, and whether a write problem was said.
    private struct Gathering {
        var clocked: ClockedLoudness
        var problemSaid = false
    }

    private let gathering: Mutex<Gathering>
    /// The wall clock each reading is placed by (UTC seconds).
    private let clock: @Sendable () -> Double
    /// Each line made, also when none is written.
    private let onLine: @Sendable (LoudnessLogLine) -> Void
    /// Told once when a line cannot be written (a full disk, a removed
    /// folder); the meter goes on, and later lines are tried again.
    private let onProblem: @Sendable (String) -> Void

    /// Opens (or creates) the log at `path` for appending (nil: no file).
    public init(path: String?, intervalSeconds: Double, timeZone: TimeZone = .current, readingSeconds: Double = 0.1,
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                onLine: @escaping @Sendable (LoudnessLogLine) -> Void = { _ in },
                onProblem: @escaping @Sendable (String) -> Void = { _ in }) throws(MeteringError) {
        self.path = path
        self.intervalSeconds = intervalSeconds
        self.clock = clock
        self.onLine = onLine
        self.onProblem = onProblem
        gathering = Mutex(Gathering(clocked: ClockedLoudness(intervalSeconds: intervalSeconds, timeZone: timeZone,
                                                             readingSeconds: readingSeconds)))
        guard let path else {
            file = nil
            return
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw .unwritableLog(path: path, reason: "it is a folder; give the log file's path")
        }
        do {
            file = try FileDescriptor.open(path, .writeOnly, options: [.append, .create, .closeOnExec],
                                           permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw .unwritableLog(path: path, reason: Errno.of(error).sentence + "; choose a writable path")
        }
    }

    deinit { try? file?.close() }

    /// Adds a reading, placed on the clock now; writes the lines it completes.
    public func add(_ reading: MeterReading) {
        let now = clock()
        gathering.withLock { gathering in
            for line in gathering.clocked.add(reading, at: now) { emit(line, &gathering) }
        }
    }

    /// A reset, pause or resume of the programme at `seconds` of audio.
    public func note(_ change: MeterEvent.ProgrammeChange, seconds: Double) {
        gathering.withLock { gathering in
            gathering.clocked.note(change, seconds: seconds)
            write(MeterEvent.programme(change, seconds: seconds), &gathering)
        }
    }

    /// Another event of the meter, as it happened (an alarm, dead air, the server's loss).
    public func note(_ event: some Encodable) {
        gathering.withLock { write(event, &$0) }
    }

    /// Writes what is under way (the meter stopped): its interval, hour and day, marked partial.
    public func finish() {
        gathering.withLock { gathering in
            for line in gathering.clocked.finish() { emit(line, &gathering) }
        }
    }

    private func emit(_ line: LoudnessLogLine, _ gathering: inout Gathering) {
        write(line, &gathering)
        onLine(line)
    }

    /// A line of the log: the value with its wall-clock time as ISO 8601 (this log's `time` is read by people too).
    private struct Line<Value: Encodable>: Encodable {
        let value: Value
        let time: String

        func encode(to encoder: any Encoder) throws {
            try value.encode(to: encoder)
            var json = encoder.container(keyedBy: EventKey.self)
            try json.encode(time, forKey: "time")
        }
    }

    private func write<Value: Encodable>(_ value: Value, _ gathering: inout Gathering) {
        guard let file else { return }
        let line = EventEncoding.line(Line(value: value, time: LoudnessLogLine.iso(clock())))
        do {
            _ = try file.writeAll((line + "\n").utf8)
            gathering.problemSaid = false
        } catch {
            guard !gathering.problemSaid else { return }
            gathering.problemSaid = true
            onProblem("cannot write to the loudness log '\(path ?? "")' (\(Errno.of(error).sentence)); metering goes on, "
                      + "and the next lines are tried again: free space or fix the folder")
        }
    }
}
