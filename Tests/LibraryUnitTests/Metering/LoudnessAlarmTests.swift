import Foundation
import JackTestSupport
@testable import Metering
import Recording
import XCTest

/// Compliance alarms (`jas meter --loudness`): a programme that steps 5 LU
/// over the target for longer than the hold is one alarm and one end, a
/// true peak over the ceiling is one alarm ended after the hold, and a
/// level that hovers at a threshold does not flap.
final class LoudnessAlarmTests: JackTestCase {
    /// The rules on their own: readings every 100 ms.
    func testAStepIsOneAlarmAndOneEndAndAHoverAtAThresholdDoesNotFlap() {
        var alarm = LoudnessAlarm(target: .r128, holdSeconds: 5)
        var changes: [LoudnessAlarm.Change] = []
        func feed(_ seconds: ClosedRange<Double>, _ level: (Double) -> Double?, truePeak: Double = -10) {
            for tick in Int(seconds.lowerBound * 10)...Int(seconds.upperBound * 10) {
                let time = Double(tick) / 10
                changes += alarm.observe(seconds: time, shortTermLUFS: level(time), truePeakDBTP: truePeak)
            }
        }
        // The first 3 s, while the window fills (its loudness rising from far below), judge nothing.
        var startup = LoudnessAlarm(target: .r128, holdSeconds: 1)
        let early = (1...50).flatMap { tick in
            startup.observe(seconds: Double(tick) / 10, shortTermLUFS: tick < 30 ? -40 + Double(tick) / 2 : -23, truePeakDBTP: -10)
        }
        XCTAssertEqual(early, [], "the filling window raised an alarm")
        feed(0.1...20) { _ in -23 }
        feed(20.1...40) { _ in -18 }
        feed(40.1...60) { _ in -23 }
        XCTAssertEqual(changes.map(\.kind), [.tooLoud, .tooLoud])
        XCTAssertEqual(changes.map(\.on), [true, false])
        XCTAssertEqual(changes.first?.sinceSeconds ?? 0, 20.1, accuracy: 1e-9)
        XCTAssertEqual(changes.first?.seconds ?? 0, 25.1, accuracy: 1e-9, "after the hold")
        XCTAssertEqual(changes.first?.level, -18)
        XCTAssertEqual(changes.last?.seconds ?? 0, 45.1, accuracy: 1e-9, "back inside for the hold")
        XCTAssertEqual(changes.last?.lastedSeconds ?? 0, 20, accuracy: 1e-9)

        // Hovering at the upper threshold (−22 LUFS) by ±0.2 LU every second, for two minutes:
        // never 5 s above it, so no alarm.
        changes = []
        feed(60.1...180) { time in Int(time) % 2 == 0 ? -21.8 : -22.2 }
        XCTAssertEqual(changes, [], "a hover raised an alarm")
        // Once on, hovering at the threshold keeps it on (it ends 0.5 LU inside): one start, no end.
        feed(180.1...190) { _ in -20 }
        feed(190.1...300) { time in Int(time) % 2 == 0 ? -21.8 : -22.2 }
        XCTAssertEqual(changes.map(\.on), [true], "it flapped: \(changes)")
        // Silence ends a too-loud alarm and starts no too-quiet one; a true peak over starts at once.
        feed(300.1...310) { _ in nil }
        feed(310.1...320) { _ in -1441 } // a K-weighting filter's tail after the tone stopped
        feed(320.1...320.1, { _ in -23 }, truePeak: -0.5)
        feed(320.2...330) { _ in -23 }
        XCTAssertEqual(changes.map { "\($0.kind.rawValue) \($0.on)" },
                       ["too_loud true", "too_loud false", "true_peak_over true", "true_peak_over false"])
        XCTAssertEqual(changes[2].seconds, 320.1, accuracy: 1e-9)
        XCTAssertEqual(changes[3].seconds, 325.2, accuracy: 1e-9, "5 s without an over")
        // Too quiet: 5 LU under, then back.
        changes = []
        feed(330.1...350) { _ in -28 }
        feed(350.1...360) { _ in -23 }
        XCTAssertEqual(changes.map { "\($0.kind.rawValue) \($0.on)" }, ["too_quiet true", "too_quiet false"])
        XCTAssertEqual(changes.first?.threshold, -24)
        XCTAssertEqual(changes.first?.level, -28)
    }

    /// `jas meter --file` with a target: the events and the command, on a
    /// file whose loudness steps 5 LU over R128's target and back, with a
    /// 50 ms burst at full scale later.
    func testTheStandardsAreFoundByTheNamesPeopleWrite() {
        for name in ["r128", "R128", "EBU", "ebu-r128"] { XCTAssertEqual(LoudnessTarget.named(name), .r128, name) }
        for name in ["a85", "ATSC", "atsc-a85"] { XCTAssertEqual(LoudnessTarget.named(name), .a85, name) }
        XCTAssertNil(LoudnessTarget.named("r129"))
        XCTAssertEqual(LoudnessTarget.r128.targetLUFS, -23)
        XCTAssertEqual(LoudnessTarget.a85.toleranceLU, 2)
    }

    func testJasMeterSaysEachAlarmOnceAndRunsTheCommand() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The tone's level that reads −23 LUFS, measured by the meter itself.
        let probe = "\(folder)/probe.wav"
        try writeTone(probe, segments: [(10, -20)])
        let measured = try XCTUnwrap(try FileMeter.meter(path: probe).integratedLUFS)
        let base = -20 + (-23 - measured)
        let path = "\(folder)/steps.wav"
        try writeTone(path, segments: [(20, base), (20, base + 5), (20, base)], burstAt: 52)
        let hooks = "\(folder)/hooks.txt"
        let result = try run([jas, "meter", "--file", path, "--json", "--loudness", "r128", "--loudness-hold", "5s",
                              "--on-loudness-alarm", "echo \"$JAS_EVENT $JAS_ALARM $JAS_LEVEL\" >> '\(hooks)'"])
        XCTAssertEqual(result.status, 0, result.output)
        let events = result.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { ($0["event"] as? String ?? "").hasPrefix("loudness_alarm") }
        XCTAssertEqual(events.map { "\($0["event"]!) \($0["alarm"]!)" },
                       ["loudness_alarm too_loud", "loudness_alarm_end too_loud",
                        "loudness_alarm true_peak_over", "loudness_alarm_end true_peak_over"], "\(events)")
        guard events.count == 4 else { return }
        // Too loud from the step (the 3 s window takes a moment to rise past −22), for the hold.
        XCTAssertEqual(events[0]["since_seconds"] as? Double ?? 0, 20.5, accuracy: 0.6)
        XCTAssertEqual((events[0]["seconds"] as? Double ?? 0) - (events[0]["since_seconds"] as? Double ?? 0), 5, accuracy: 0.11)
        XCTAssertEqual(events[0]["level_lufs"] as? Double ?? 0, -18, accuracy: 0.3)
        XCTAssertEqual(events[0]["threshold_lufs"] as? Double, -22)
        XCTAssertEqual(events[0]["target"] as? String, "r128")
        XCTAssertEqual(events[1]["seconds"] as? Double ?? 0, 47.5, accuracy: 1.1)
        XCTAssertEqual(events[2]["seconds"] as? Double ?? 0, 52.1, accuracy: 0.11)
        XCTAssertGreaterThan(events[2]["level_dbtp"] as? Double ?? -99, -1)
        XCTAssertEqual(events[3]["seconds"] as? Double ?? 0, 57.1, accuracy: 0.11)
        // The command ran once for each, with the event's facts (all four ended before jas did).
        let ran = (try? String(contentsOfFile: hooks, encoding: .utf8)) ?? ""
        XCTAssertEqual(ran.split(separator: "\n").map { $0.split(separator: " ").prefix(2).joined(separator: " ") }.sorted(),
                       ["loudness_alarm too_loud", "loudness_alarm true_peak_over",
                        "loudness_alarm_end too_loud", "loudness_alarm_end true_peak_over"], ran)

        // Typed as people type them; a target that makes no sense is refused, naming the option.
        let typed = try run([jas, "meter", "--file", path, "--json", "--target", "-18LUFS", "--tolerance", "2 LU",
                             "--max-true-peak", "-2dBTP"])
        XCTAssertEqual(typed.status, 0, typed.output)
        let refused = try run([jas, "meter", "--file", path, "--loudness", "r129"])
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.output.contains("--loudness must be r128 or a85"), refused.output)
    }

    /// A stereo 997 Hz sine, each segment (seconds, dBFS peak) after the other;
    /// `burstAt`: 50 ms at full scale from that second on.
    private func writeTone(_ path: String, segments: [(seconds: Double, level: Double)], burstAt: Double? = nil) throws {
        let rate = 48000.0
        var samples: [Float] = []
        var n = 0
        for segment in segments {
            let amplitude = pow(10, segment.level / 20)
            for _ in 0..<Int(segment.seconds * rate) {
                let time = Double(n) / rate
                let gain = burstAt.map { time >= $0 && time < $0 + 0.05 } == true ? 0.99 : amplitude
                let value = Float(gain * sin(2 * Double.pi * 997 * time))
                samples += [value, value]
                n += 1
            }
        }
        let writer = try SoundFileWriter(path: path, channels: 2, sampleRate: 48000, format: RecordingFormat())
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: n) }
        writer.close()
    }
}
