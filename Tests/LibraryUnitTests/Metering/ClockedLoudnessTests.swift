import EventSchema
import Foundation
@testable import Metering
import Recording
import XCTest

/// The compliance log's lines on the clock's boundaries (`ClockedLoudness`):
/// intervals on whole seconds across midnight with their own maxima, hours
/// and days as the zone's clocks show them (a 25-hour day at the autumn
/// change), gaps for time without readings, and an hour's integrated
/// loudness and range equal to the meter's over the same audio.
final class ClockedLoudnessTests: XCTestCase {
    static func reading(_ seconds: Double, momentary: Double?, shortTerm: Double?, truePeak: Double = -20) -> MeterReading {
        MeterReading(seconds: seconds, momentaryLUFS: momentary, shortTermLUFS: shortTerm, integratedLUFS: -23,
                     loudnessRangeLU: 4, channels: [ChannelReading(channel: 1, source: "in", samplePeakDBFS: truePeak - 0.5,
                                                                   truePeakDBTP: truePeak, rmsDBFS: -30, ppmTypeIDBFS: -30,
                                                                   ppmTypeIIbDBFS: -30, vu: -10, kMeter: -10)])
    }

    func testIntervalsFallOnWholeSecondsAcrossMidnightWithTheirOwnMaxima() throws {
        let zone = try XCTUnwrap(TimeZone(identifier: "UTC"))
        var clocked = ClockedLoudness(intervalSeconds: 1, timeZone: zone)
        // 2026-11-26T23:59:57.43Z: readings every 100 ms, made 30 ms after their audio ends.
        let start = 1_795_737_597.43
        var lines: [LoudnessLogLine] = []
        for step in 1...50 {
            let utc = start + Double(step) / 10
            let loud = step == 17 // one loud reading at 23:59:59.13
            lines += clocked.add(Self.reading(Double(step) / 10, momentary: loud ? -10 : -23, shortTerm: loud ? -15 : -23,
                                              truePeak: loud ? -2 : -20), at: utc)
        }
        lines += clocked.finish()
        let intervals = lines.compactMap { if case let .interval(line) = $0 { line } else { nil } }
        XCTAssertEqual(intervals.map { LoudnessLogLine.iso($0.from) },
                       ["2026-11-26T23:59:57.000Z", "2026-11-26T23:59:58.000Z", "2026-11-26T23:59:59.000Z",
                        "2026-11-27T00:00:00.000Z", "2026-11-27T00:00:01.000Z", "2026-11-27T00:00:02.000Z"])
        XCTAssertEqual(intervals.map(\.readings), [6, 10, 10, 10, 10, 4])
        XCTAssertEqual(intervals.map(\.partial), [false, false, false, false, false, true])
        XCTAssertEqual(intervals.map(\.maxShortTermLUFS), [-23, -23, -15, -23, -23, -23])
        XCTAssertEqual(intervals.map(\.truePeakDBTP), [-20, -20, -2, -20, -20, -20])
        // Midnight ends the hour and the day.
        let periods = lines.compactMap { if case let .period(line) = $0 { line } else { nil } }
        XCTAssertEqual(periods.map { "\($0.kind.rawValue) \(LoudnessLogLine.iso($0.from)) \($0.partial)" },
                       ["hour 2026-11-26T23:00:00.000Z false", "day 2026-11-26T00:00:00.000Z false",
                        "hour 2026-11-27T00:00:00.000Z true", "day 2026-11-27T00:00:00.000Z true"])
        XCTAssertEqual(periods[0].maxShortTermLUFS, -15)
        XCTAssertEqual(periods[0].loudnessRangeSettled, false, "3 s of audio")
        // The line as written: times to the millisecond.
        let text = EventEncoding.line(lines[0])
        XCTAssertTrue(text.contains(#""from":"2026-11-26T23:59:57.000Z""#) && text.contains(#""to":"2026-11-26T23:59:58.000Z""#), text)
    }

    func testTheAutumnDayHas25HoursAndTimeWithoutReadingsIsAGap() throws {
        let zone = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        var clocked = ClockedLoudness(intervalSeconds: 60, timeZone: zone, readingSeconds: 1)
        // From 2026-10-24T21:30Z (23:30 CEST) a reading each second, 27 hours, but none for ten minutes at 05:00Z.
        let start = 1_792_877_400.0
        var lines: [LoudnessLogLine] = []
        for second in 1...(27 * 3600) {
            let utc = start + Double(second)
            if (1_792_904_400.0..<1_792_905_000.0).contains(utc) { continue }
            lines += clocked.add(Self.reading(Double(second), momentary: -23, shortTerm: -23), at: utc)
        }
        let days = lines.compactMap { if case let .period(line) = $0, line.kind == .day { line } else { nil } }
        let sunday = try XCTUnwrap(days.first { LoudnessLogLine.iso($0.from) == "2026-10-24T22:00:00.000Z" }, "\(days.map { LoudnessLogLine.iso($0.from) })")
        XCTAssertEqual(LoudnessLogLine.iso(sunday.to), "2026-10-25T23:00:00.000Z", "midnight to midnight, 25 hours")
        XCTAssertEqual(sunday.utcOffset, 7200)
        let hours = lines.compactMap { if case let .period(line) = $0, line.kind == .hour { line } else { nil } }
        XCTAssertTrue(hours.allSatisfy { $0.to - $0.from == 3600 }, "every hour is an hour")
        XCTAssertEqual(Set(hours.map(\.from)).count, hours.count, "the hour shown twice is two hours")
        let gaps = lines.compactMap { if case let .gap(from, to, _) = $0 { (from, to) } else { nil } }
        XCTAssertEqual(gaps.count, 1)
        XCTAssertEqual(gaps.first.map { LoudnessLogLine.iso($0.0) }, "2026-10-25T05:00:00.000Z")
        // The reading made at 05:10:00 holds the second before it: its minute is 05:09.
        XCTAssertEqual(gaps.first.map { LoudnessLogLine.iso($0.1) }, "2026-10-25T05:09:00.000Z")
        XCTAssertTrue(sunday.loudnessRangeSettled)
        XCTAssertEqual(sunday.integratedLUFS ?? 0, -23, accuracy: 0.1)
    }

    /// An hour's figures from the readings' blocks and windows equal the
    /// meter's integrated loudness and loudness range over the same audio.
    func testAnHoursFiguresAreTheMetersOverTheSameAudio() throws {
        // 60 s of a tone whose level steps every 5 s through 12 levels (−36 to −14 dBFS).
        let rate = 48000.0
        var samples: [Float] = []
        for n in 0..<Int(60 * rate) {
            let level = -36 + 2 * Double(Int(Double(n) / rate / 5))
            let value = Float(pow(10, level / 20) * sin(2 * Double.pi * 997 * Double(n) / rate))
            samples += [value, value]
        }
        let folder = NSTemporaryDirectory() + "clocked-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/steps.wav"
        let writer = try SoundFileWriter(path: path, channels: 2, sampleRate: 48000, format: RecordingFormat())
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count / 2) }
        writer.close()
        var readings: [MeterReading] = []
        let summary = try FileMeter.meter(path: path, interval: 0.1, onReading: { readings.append($0) })
        var clocked = ClockedLoudness(intervalSeconds: 1, timeZone: try XCTUnwrap(TimeZone(identifier: "UTC")))
        var lines: [LoudnessLogLine] = []
        for reading in readings { lines += clocked.add(reading, at: 1_795_737_600 + reading.seconds) }
        lines += clocked.finish()
        let hour = try XCTUnwrap(lines.compactMap { if case let .period(line) = $0, line.kind == .hour { line } else { nil } }.first)
        let integrated = try XCTUnwrap(hour.integratedLUFS), range = try XCTUnwrap(hour.loudnessRangeLU)
        print(String(format: "hour from readings: I %.2f LUFS, LRA %.2f LU; meter: I %.2f LUFS, LRA %.2f LU",
                     integrated, range, summary.integratedLUFS ?? .nan, summary.lraLU ?? .nan))
        XCTAssertEqual(integrated, try XCTUnwrap(summary.integratedLUFS), accuracy: 0.1)
        XCTAssertEqual(range, try XCTUnwrap(summary.lraLU), accuracy: 0.2)
        XCTAssertTrue(hour.loudnessRangeSettled)
    }
}
