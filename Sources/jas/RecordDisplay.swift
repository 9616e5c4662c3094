import EventSchema
import Foundation
import JackRuntime
import Metering
import Recording
import RemoteWatch
import Synchronization

/// What `jas record` shows: a status line refreshing in place on a terminal
/// (stderr), events as lines, a summary; or JSON Lines on stdout.
final class RecordDisplay: Sendable {
    let json: Bool
    /// With --http: every object also goes to the watch board.
    let watch: WatchBoard?
    let configuration: Recorder.Configuration
    private let terminal = isatty(STDERR_FILENO) != 0
    /// Held while a line is drawn, so that lines never interleave.
    private let drawing = Mutex(())

    init(json: Bool, configuration: Recorder.Configuration, watch: WatchBoard?) {
        self.json = json
        self.configuration = configuration
        self.watch = watch
    }

    func announce(_ take: RunningTake) {
        if json {
            let announcement = RecordingAnnouncement(path: take.path, paths: take.paths, ports: take.ports,
                                                     sampleRate: take.sampleRate, channels: take.channels,
                                                     ringFrames: take.ringCapacityFrames, pid: Int(getpid()))
            printLine(announcement)
            watch?.publish(event: announcement)
        } else {
            let format = configuration.format
            Output.diagnostic("recording \(Output.safe(take.ports.joined(separator: ", ")))")
            Output.diagnostic("to '\(Output.safe(take.path))' (\(format.container.rawValue), \(format.sampleFormat.name), "
                              + "\(take.sampleRate) Hz); ring "
                              + String(format: "%.1f s", Double(take.ringCapacityFrames) / Double(max(1, take.sampleRate)))
                              + (configuration.waitsForStartCommand
                                 ? "; press Enter or send SIGUSR1 (kill -USR1 \(getpid())) to start" : "")
                              + "; Ctrl-C stops")
        }
    }

    func show(_ event: RecordingEvent) {
        watch?.publish(event)
        if json {
            printLine(event)
        } else {
            line(event.text)
        }
    }

    /// A reading of the take's meter (for the watch only).
    func reading(_ reading: MeterReading) {
        watch?.publish(reading)
    }

    func progress(_ progress: RecordingProgress, tick: Int) {
        // The watch every quarter second, stdout every second.
        watch?.publish(progress)
        if json {
            if tick % 4 == 0 { printLine(progress) }
            return
        }
        guard terminal else { return }
        drawing.withLock { _ in _ = try? FileHandle.standardError.write(contentsOf: Data(("\r" + Self.statusLine(progress) + "\u{1B}[K").utf8)) }
    }

    /// One line of at most 80 columns: state, elapsed time, loudest channel's
    /// peak with a bar, ring fill, overruns and xruns.
    static func statusLine(_ progress: RecordingProgress) -> String {
        let seconds = Double(progress.framesWritten) / Double(max(1, progress.sampleRate))
        let peak = progress.peakDBFS.max() ?? -.infinity
        let width = 20
        let filled = peak.isFinite ? max(0, min(width, Int(((peak + 60) / 60 * Double(width)).rounded()))) : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let state = progress.serverLost ? "WAIT" : progress.isRecording ? "REC " : "ARM "
        let level = peak.isFinite ? String(format: "%6.1f", peak) : "  -inf"
        return String(format: "%@ %02d:%02d:%04.1f %@ dBFS [%@] ring %3.0f%% ovr %d xrun %d", state,
                      Int(seconds) / 3600, Int(seconds) / 60 % 60, seconds.truncatingRemainder(dividingBy: 60),
                      level, bar, progress.ringFill * 100, progress.overruns, progress.xruns)
    }

    func finish(_ summary: RecordingSummary) {
        watch?.publish(event: summary)
        if json { printLine(summary) }
        if !json {
            line(String(format: "wrote %lld frames (%.3f s) to %@", summary.framesWritten, summary.durationSeconds,
                        summary.paths.joined(separator: ", ")))
            line("overruns \(summary.overruns)" + (summary.overruns > 0 ? " (\(summary.overrunFrames) frames)" : "")
                 + ", xruns \(summary.xruns), gaps \(summary.gaps)"
                 + (summary.interruptions > 0 ? ", interruptions \(summary.interruptions)" : "")
                 + (summary.gaps > 0 ? " (\(summary.gapFrames) frames written as silence; see \(summary.logPath ?? "the events above"))" : ""))
            if let problem = summary.problem {
                line("stopped early: \(problem)")
            } else if let reason = summary.stopReason, reason.hasPrefix("source lost") {
                line("stopped: \(reason) (--stop-on-source-lost)")
            }
        }
    }

    private func line(_ text: String) {
        // Names in it (files, ports) are the user's: a newline or an escape in one is shown, never obeyed.
        drawing.withLock { _ in Output.diagnostic((terminal ? "\r\u{1B}[K" : "") + Output.safe(text)) }
    }

    /// Prints a line of the schema (with --json), stamped now.
    private func printLine(_ value: some Encodable) {
        let text = EventEncoding.line(value, at: Date())
        drawing.withLock { _ in Output.line(text) }
    }
}

/// `jas record --json`'s first line: what is recorded where, and the process to signal.
struct RecordingAnnouncement: Encodable {
    var event = "recording"
    let path: String
    let paths: [String]
    let ports: [String]
    let sampleRate: Int
    let channels: Int
    let ringFrames: Int
    let pid: Int
}
