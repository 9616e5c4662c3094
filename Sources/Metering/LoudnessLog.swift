import EventSchema
import Foundation

/// A loudness compliance log for long unattended runs: one JSON line per
/// interval of audio (the highest momentary loudness in it, short-term at
/// its end, integrated and LRA so far, the highest true and sample peak in
/// it), and a line for every reset and pause. Appended and flushed line by
/// line, so a day's log survives a crash or a restart of the meter; an
/// existing log is continued, never replaced.
public final class LoudnessLog: @unchecked Sendable { // the file and its running values are behind `lock`
    public let path: String
    public let intervalSeconds: Double
    private let handle: FileHandle
    private let lock = NSLock()
    // The interval under way.
    private var from = 0.0
    private var maxMomentary: Double?
    private var truePeak = -Double.infinity
    private var samplePeak = -Double.infinity
    private var last: MeterReading?
    private var paused = false
    /// Told once when a line cannot be written (a full disk, a removed
    /// folder); the meter goes on, and later lines are tried again.
    private let onProblem: @Sendable (String) -> Void
    private var problemSaid = false

    /// Opens (or creates) the log at `path` for appending.
    public init(path: String, intervalSeconds: Double,
                onProblem: @escaping @Sendable (String) -> Void = { _ in }) throws(MeteringError) {
        self.path = path
        self.intervalSeconds = intervalSeconds
        self.onProblem = onProblem
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw .unwritableLog(path: path, reason: "it is a folder; give the log file's path")
        }
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .unwritableLog(path: path, reason: String(cString: strerror(errno)) + "; choose a writable path")
        }
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Adds a reading; writes the interval's line when the reading ends it.
    public func add(_ reading: MeterReading) {
        lock.withLock {
            if let momentary = reading.momentaryLUFS { maxMomentary = max(maxMomentary ?? -.infinity, momentary) }
            truePeak = max(truePeak, reading.channels.map(\.truePeakDBTP).max() ?? -.infinity)
            samplePeak = max(samplePeak, reading.channels.map(\.samplePeakDBFS).max() ?? -.infinity)
            last = reading
            if reading.seconds - from >= intervalSeconds - 1e-9 { writeInterval() }
        }
    }

    /// A reset, pause or resume of the programme at `seconds` of audio.
    public func note(_ change: MeterEvent.ProgrammeChange, seconds: Double) {
        lock.withLock {
            if change == .paused { paused = true }
            if change == .resumed { paused = false }
            write(MeterEvent.programme(change, seconds: seconds))
        }
    }

    /// Writes what is left of the interval under way (the meter stopped).
    public func finish() { lock.withLock { if let last, last.seconds > from { writeInterval() } } }

    private func writeInterval() {
        guard let last else { return }
        write(Interval(fromSeconds: from, toSeconds: last.seconds, maxMomentaryLUFS: maxMomentary,
                       shortTermLUFS: last.shortTermLUFS, integratedLUFS: last.integratedLUFS,
                       loudnessRangeLU: last.loudnessRangeLU, truePeakDBTP: truePeak, samplePeakDBFS: samplePeak,
                       paused: paused))
        from = last.seconds
        maxMomentary = nil
        truePeak = -.infinity
        samplePeak = -.infinity
    }

    /// One interval's line.
    struct Interval: Encodable {
        let fromSeconds: Double
        let toSeconds: Double
        let maxMomentaryLUFS: Double?
        let shortTermLUFS: Double?
        let integratedLUFS: Double?
        let loudnessRangeLU: Double?
        let truePeakDBTP: Double
        let samplePeakDBFS: Double
        let paused: Bool

        func encode(to encoder: any Encoder) throws {
            var json = encoder.container(keyedBy: EventKey.self)
            try json.encode("interval", forKey: "event")
            try json.encode(fromSeconds, forKey: "from_seconds")
            try json.encode(toSeconds, forKey: "to_seconds")
            try json.encodeFigure(maxMomentaryLUFS, forKey: "max_momentary_lufs")
            try json.encodeFigure(shortTermLUFS, forKey: "short_term_lufs")
            try json.encodeFigure(integratedLUFS, forKey: "integrated_lufs")
            try json.encodeFigure(loudnessRangeLU, forKey: "lra_lu")
            try json.encodeFigure(truePeakDBTP, forKey: "true_peak_dbtp")
            try json.encodeFigure(samplePeakDBFS, forKey: "sample_peak_dbfs")
            try json.encode(paused, forKey: "paused")
        }
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

    private func write<Value: Encodable>(_ value: Value) {
        let line = EventEncoding.line(Line(value: value, time: ISO8601DateFormatter().string(from: Date())))
        do {
            try handle.write(contentsOf: Data((line + "\n").utf8))
            problemSaid = false
        } catch {
            guard !problemSaid else { return }
            problemSaid = true
            onProblem("cannot write to the loudness log '\(path)' (\(error.localizedDescription)); metering goes on, "
                      + "and the next lines are tried again: free space or fix the folder")
        }
    }
}
