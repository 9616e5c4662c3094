@testable import JackAudioSession
import Capture
import EventSchema
import Foundation
@testable import jas
@testable import Metering
@testable import Recording
@testable import RemoteWatch
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
        let time = EventSamples.time
        for (name, reading) in EventSamples.readings { add("meter/" + name, EventEncoding.line(reading, at: time)) }
        add("meter/summary", EventEncoding.line(EventSamples.summary, at: time))
        for (name, change) in EventSamples.silenceChanges {
            let tick = 1.0 / 48000
            let (seconds, silent) = (Double(change.atFrame) * tick, Double(change.silentFrames) * tick)
            let event: MeterEvent = change.kind == .silence
                ? .silence(channels: change.channels, levelDBFS: change.levelDBFS, seconds: seconds, silentSeconds: silent)
                : .signal(channels: change.channels, levelDBFS: change.levelDBFS, seconds: seconds, silentSeconds: silent)
            add(name, EventEncoding.line(event, at: time))
        }
        for (name, change) in EventSamples.sourceChanges {
            add(name, EventEncoding.line(MeterEvent.source(ports: change.ports, seconds: change.seconds,
                                                           awaySeconds: change.awaySeconds, returned: change.returned),
                                         at: time))
        }
        add("meter-programme", EventEncoding.line(MeterEvent.programme(.paused, seconds: 61.5), at: time))
        add("meter-warning", EventEncoding.line(MeterEvent.warning(message: "one \"quoted\" thing"), at: time))
        let alarm = LoudnessAlarm.Change(kind: .tooLoud, on: false, sinceSeconds: 40.1, seconds: 45.1, level: -17.955,
                                         threshold: -22.5, lastedSeconds: 20)
        add("meter-loudness-alarm", EventEncoding.line(MeterEvent.loudnessAlarm(alarm, target: .r128), at: time))
        for (name, event) in EventSamples.recordingEvents { add("record/" + name, EventEncoding.line(event, at: time)) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("event-schema-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let logPath = folder.appendingPathComponent("take.log").path
        let log = try RecordingLog(path: logPath)
        for (_, event) in EventSamples.recordingEvents { log.append(event) }
        let logged = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
        for ((name, _), line) in zip(EventSamples.recordingEvents, logged) { add("record-log/" + name, String(line)) }
        for (name, progress) in EventSamples.progress { add("record/" + name, EventEncoding.line(progress, at: time)) }
        for (name, summary) in EventSamples.recordingSummaries {
            add("record/" + name, EventEncoding.line(summary, at: time))
        }
        let loudnessPath = folder.appendingPathComponent("loudness.jsonl").path
        let loudness = try LoudnessLog(path: loudnessPath, intervalSeconds: 10, timeZone: TimeZone(identifier: "UTC")!,
                                       clock: { EventSamples.time.timeIntervalSince1970 })
        loudness.add(MeterReading(seconds: 5, momentaryLUFS: -20.5, shortTermLUFS: nil, integratedLUFS: nil,
                                  loudnessRangeLU: nil, channels: EventSamples.channels))
        loudness.add(MeterReading(seconds: 10, momentaryLUFS: -21.25, shortTermLUFS: -22.123, integratedLUFS: -23.5,
                                  loudnessRangeLU: 3.3, channels: EventSamples.channels))
        loudness.note(.reset, seconds: 10.5)
        loudness.add(MeterReading(seconds: 12, momentaryLUFS: nil, shortTermLUFS: nil, integratedLUFS: nil,
                                  loudnessRangeLU: nil, channels: []))
        loudness.finish()
        let loudnessLines = try String(contentsOfFile: loudnessPath, encoding: .utf8).split(separator: "\n")
        for (index, line) in loudnessLines.enumerated() { add("loudness-log/\(index)", String(line)) }
        return lines
    }
}

/// The watch consumes the schema's values: its stream carries the same line
/// `--json` prints, and `/api/status` holds the values themselves (with the
/// time each happened), not text parsed back.
final class WatchBoardSchemaTests: XCTestCase {
    func testTheStatusHoldsTheValuesWithTheirTimes() throws {
        let board = WatchBoard(tool: .record, server: "studio")
        board.describe(["path": "/srv/take.wav"], ports: ["system:capture_1"])
        let reading = EventSamples.readings[0].1
        board.publish(reading, at: EventSamples.time)
        board.publish(RecordingEvent.serverLost(atFrame: 400, reason: "shutdown"), at: EventSamples.time)
        board.publish(RecordingEvent.silence(channels: [1], levelDBFS: -.infinity, atFrame: 1, silentFrames: 2),
                      at: EventSamples.time.addingTimeInterval(1))
        board.publish(EventSamples.progress[0].1, at: EventSamples.time.addingTimeInterval(2))

        let line = board.statusLine(at: EventSamples.time.addingTimeInterval(3))
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual(status["event"] as? String, "status")
        XCTAssertEqual(status["tool"] as? String, "record")
        XCTAssertEqual(status["server"] as? String, "studio")
        XCTAssertEqual(status["path"] as? String, "/srv/take.wav")
        XCTAssertEqual(status["server_up"] as? Bool, false, "a server_lost event says the server is gone")
        XCTAssertEqual(status["silence"] as? Bool, true, "a silence event says dead air")
        XCTAssertEqual(status["time"] as? Double, EventSamples.time.timeIntervalSince1970 + 3)
        let recent = try XCTUnwrap(status["recent_events"] as? [[String: Any]])
        XCTAssertEqual(recent.map { $0["event"] as? String }, ["server_lost", "silence"])
        XCTAssertEqual(recent.map { $0["time"] as? Double }, [EventSamples.time.timeIntervalSince1970,
                                                              EventSamples.time.timeIntervalSince1970 + 1])
        XCTAssertTrue(recent[1]["level_dbfs"] is NSNull, "digital silence has no level: null")
        let shown = try XCTUnwrap(status["reading"] as? [String: Any])
        XCTAssertEqual(shown["momentary_lufs"] as? Double, -23.46)
        XCTAssertEqual(shown["time"] as? Double, EventSamples.time.timeIntervalSince1970)
        let progress = try XCTUnwrap(status["progress"] as? [String: Any])
        XCTAssertEqual(progress["frames_written"] as? Int, 480_000)
        // The status embeds each value as the stream and --json write it.
        let embedded = try XCTUnwrap(line.range(of: #""reading":\{[^{}]*("channels":\[[^\]]*\])[^{}]*\}"#,
                                                options: .regularExpression))
        XCTAssertFalse(line[embedded].isEmpty)
        XCTAssertTrue(line.contains(EventEncoding.line(RecordingEvent.serverLost(atFrame: 400, reason: "shutdown"),
                                                       at: EventSamples.time)),
                      "an event in the status is the line the stream carried: \(line)")
    }

    func testAFactCannotReplaceTheStatusKeys() throws {
        let board = WatchBoard(tool: .meter, server: "studio")
        board.describe(["event": "forged", "server_up": "no"], ports: [])
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(board.statusLine().utf8)) as? [String: Any])
        XCTAssertEqual(status["event"] as? String, "status")
        XCTAssertEqual(status["server_up"] as? Bool, true)
    }
}
