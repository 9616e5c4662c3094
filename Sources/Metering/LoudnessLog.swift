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
    public func note(_ event: String, seconds: Double) {
        lock.withLock {
            if event == "loudness_paused" { paused = true }
            if event == "loudness_resumed" { paused = false }
            write(["event": event, "seconds": seconds])
        }
    }

    /// Writes what is left of the interval under way (the meter stopped).
    public func finish() { lock.withLock { if let last, last.seconds > from { writeInterval() } } }

    private func writeInterval() {
        guard let last else { return }
        write(["event": "interval", "from_seconds": from, "to_seconds": last.seconds,
               "max_momentary_lufs": json(maxMomentary), "short_term_lufs": json(last.shortTermLUFS),
               "integrated_lufs": json(last.integratedLUFS), "lra_lu": json(last.loudnessRangeLU),
               "true_peak_dbtp": json(truePeak), "sample_peak_dbfs": json(samplePeak), "paused": paused])
        from = last.seconds
        maxMomentary = nil
        truePeak = -.infinity
        samplePeak = -.infinity
    }

    private func write(_ object: [String: Any]) {
        var object = object
        object["time"] = ISO8601DateFormatter().string(from: Date())
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        do {
            try handle.write(contentsOf: data + Data("\n".utf8))
            problemSaid = false
        } catch {
            guard !problemSaid else { return }
            problemSaid = true
            onProblem("cannot write to the loudness log '\(path)' (\(error.localizedDescription)); metering goes on, "
                      + "and the next lines are tried again: free space or fix the folder")
        }
    }
}
