@testable import AudioSession
import Capture
import Foundation
@testable import jas
@testable import Metering
@testable import Recording
import XCTest

/// Every kind of JSON line the tools write, for fixed values, against the
/// lines recorded from the code before the one schema (Fixtures/lines.jsonl).
/// `RECORD_EVENT_FIXTURES=1` writes the file instead of comparing.
final class EventSchemaTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/lines.jsonl")

    func testEveryLineIsAsRecorded() throws {
        let lines = try Self.currentLines()
        if ProcessInfo.processInfo.environment["RECORD_EVENT_FIXTURES"] == "1" {
            try (lines.map { "\($0.0)\t\($0.1)" }.joined(separator: "\n") + "\n")
                .write(to: Self.fixtures, atomically: true, encoding: .utf8)
            return
        }
        let recorded = try String(contentsOf: Self.fixtures, encoding: .utf8).split(separator: "\n").map { line in
            let parts = line.split(separator: "\t", maxSplits: 1)
            return (String(parts[0]), String(parts[1]))
        }
        XCTAssertEqual(lines.map(\.0), recorded.map(\.0), "the same kinds, in the same order")
        for (now, before) in zip(lines, recorded) where now.0 == before.0 {
            XCTAssertEqual(now.1, before.1, "\(now.0)")
        }
    }

    /// A time written now is replaced by `T`, so that lines compare.
    static func withoutTime(_ line: String) -> String {
        line.replacingOccurrences(of: #""time":("[^"]*"|[0-9.e+]+)"#, with: "\"time\":T", options: .regularExpression)
    }

    static func currentLines() throws -> [(String, String)] {
        var lines: [(String, String)] = []
        func add(_ name: String, _ line: String) { lines.append((name, withoutTime(line))) }
        for (name, event) in EventSamples.sessionEvents {
            add("session/" + name, EventFormat.json(event, time: EventSamples.time))
        }
        for (name, reading) in EventSamples.readings { add("meter/" + name, Output.jsonEventText(reading.jsonObject)) }
        add("meter/summary", Output.jsonEventText(EventSamples.summary.jsonObject))
        for (name, change) in EventSamples.silenceChanges {
            let tick = 1.0 / 48000
            let level: Any = change.levelDBFS.isFinite ? (change.levelDBFS * 100).rounded() / 100 : NSNull()
            add(name, Output.jsonEventText(["event": change.kind.rawValue, "channels": change.channels, "level_dbfs": level,
                                            "seconds": Double(change.atFrame) * tick,
                                            "silent_seconds": Double(change.silentFrames) * tick]))
        }
        for (name, change) in EventSamples.sourceChanges {
            var object: [String: Any] = ["event": change.awaySeconds == nil ? "source_lost" : "source_back",
                                         "ports": change.ports, "seconds": change.seconds]
            if let away = change.awaySeconds {
                object["away_seconds"] = away
                object["returned"] = change.returned
            }
            add(name, Output.jsonEventText(object))
        }
        add("meter-programme", Output.jsonEventText(["event": "loudness_paused", "seconds": 61.5]))
        add("meter-warning", Output.jsonEventText(["event": "warning", "message": "one \"quoted\" thing"]))
        for (name, event) in EventSamples.recordingEvents {
            add("record/" + name, Output.jsonEventText(event.jsonObject))
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("event-schema-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let logPath = folder.appendingPathComponent("take.log").path
        let log = try RecordingLog(path: logPath)
        for (_, event) in EventSamples.recordingEvents { log.append(event) }
        let logged = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
        for ((name, _), line) in zip(EventSamples.recordingEvents, logged) { add("record-log/" + name, String(line)) }
        for (name, progress) in EventSamples.progress {
            let object: [String: Any] = [
                "event": "progress", "recording": progress.isRecording, "frames_written": progress.framesWritten,
                "seconds": Double(progress.framesWritten) / Double(max(1, progress.sampleRate)),
                "peak_dbfs": progress.peakDBFS.map { $0.isFinite ? ($0 * 10).rounded() / 10 : -200 },
                "ring_fill": (progress.ringFill * 1000).rounded() / 1000, "overruns": progress.overruns,
                "xruns": progress.xruns, "gaps": progress.gaps, "gap_frames": progress.gapFrames,
                "path": progress.path.map { $0 as Any } ?? NSNull(), "server_lost": progress.serverLost,
                "clock_rate_error_ppm": progress.rateErrorPPM.map { ($0 * 100).rounded() / 100 as Any } ?? NSNull()]
            add("record/" + name, Output.jsonEventText(object))
        }
        for (name, summary) in EventSamples.recordingSummaries {
            add("record/" + name, Output.jsonEventText([
                "event": "summary", "path": summary.path, "paths": summary.paths, "log_path": summary.logPath.map { $0 as Any } ?? NSNull(),
                "frames_written": summary.framesWritten, "duration_seconds": summary.durationSeconds,
                "sample_rate": summary.sampleRate, "channels": summary.channels, "ports": summary.ports,
                "overruns": summary.overruns, "overrun_frames": summary.overrunFrames, "xruns": summary.xruns,
                "gaps": summary.gaps, "gap_frames": summary.gapFrames,
                "interruptions": summary.interruptions, "interruption_frames": summary.interruptionFrames,
                "first_frame_time": summary.firstFrameTime.map { $0 as Any } ?? NSNull(),
                "preroll_frames": summary.prerollFrames,
                "time_reference": summary.timeReference.map { $0 as Any } ?? NSNull(),
                "capture_latency_frames": summary.captureLatencyFrames, "buffer_seconds": summary.bufferSeconds,
                "problem": summary.problem.map { $0 as Any } ?? NSNull(),
                "unwritten_frames": summary.unwrittenFrames,
                "manifest_path": summary.manifestPath.map { $0 as Any } ?? NSNull(),
                "stop_reason": summary.stopReason.map { $0 as Any } ?? NSNull()]))
        }
        let loudnessPath = folder.appendingPathComponent("loudness.jsonl").path
        let loudness = try LoudnessLog(path: loudnessPath, intervalSeconds: 10)
        loudness.add(MeterReading(seconds: 5, momentaryLUFS: -20.5, shortTermLUFS: nil, integratedLUFS: nil,
                                  loudnessRangeLU: nil, channels: EventSamples.channels))
        loudness.add(MeterReading(seconds: 10, momentaryLUFS: -21.25, shortTermLUFS: -22.123, integratedLUFS: -23.5,
                                  loudnessRangeLU: 3.3, channels: EventSamples.channels))
        loudness.note("loudness_reset", seconds: 10.5)
        loudness.add(MeterReading(seconds: 12, momentaryLUFS: nil, shortTermLUFS: nil, integratedLUFS: nil,
                                  loudnessRangeLU: nil, channels: []))
        loudness.finish()
        let loudnessLines = try String(contentsOfFile: loudnessPath, encoding: .utf8).split(separator: "\n")
        for (index, line) in loudnessLines.enumerated() { add("loudness-log/\(index)", String(line)) }
        return lines
    }
}
