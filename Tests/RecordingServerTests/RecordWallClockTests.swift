import Foundation
import JackTestSupport
import Recording
import SoundFile
import XCTest

/// `jas record` as a logger runs it, on the clock: a jackd whose sample
/// clock runs 1,000 ppm fast (its monotonic clock scaled by a preloaded
/// shim), a local time zone whose midnight and a daylight-saving change fall
/// inside the take, and a trigger that names the file by its first frame.
final class RecordWallClockTests: JackTestCase {
    private let rate = 48000.0

    /// A POSIX TZ whose midnight comes `secondsToMidnight` from now and whose
    /// daylight-saving time (one hour ahead) starts 20 s after that midnight.
    private func zoneWithMidnightSoon(secondsToMidnight: Double) -> (tz: String, midnight: Double) {
        let now = Date().timeIntervalSince1970
        let midnight = (now + secondsToMidnight).rounded()
        // The offset east that makes `midnight` local 00:00:00, kept within ±12 h.
        var east = Int(86_400 - midnight.truncatingRemainder(dividingBy: 86_400)) % 86_400
        if east > 43_200 { east -= 86_400 }
        let west = -east
        let offset = String(format: "%@%02d:%02d:%02d", west < 0 ? "-" : "", abs(west) / 3600, abs(west) / 60 % 60, abs(west) % 60)
        // The new local day as a Julian day (1...365, February 29 never counted).
        var seconds = time_t(midnight) + time_t(east)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        let leap = (fields.tm_year % 4 == 0) && fields.tm_mon >= 2
        let julian = Int(fields.tm_yday) + 1 - (leap ? 1 : 0)
        let end = julian >= 360 ? 1 : julian + 5
        return ("LOG\(offset)LGD,J\(julian)/00:00:20,J\(end)/00:00:00", midnight)
    }

    func testFilesKeepToTheClockOnADriftingServerAndAcrossMidnightAndADaylightSavingChange() throws {
        let shim = try HookLibrary.driftingClock.path()
        let drifting = try startServer(period: 256, environment: ["LD_PRELOAD": shim, "DRIFT_PPM": "1000"])
        let steady = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for logger in ["fast", "local"] {
            try FileManager.default.createDirectory(atPath: "\(folder)/\(logger)", withIntermediateDirectories: true)
        }
        let fast = try RecordProcess(jas: jas, arguments: [
            "--server", drifting.name, "--ports", "loopback:capture_1", "--utc",
            "--output", "\(folder)/fast/%H%M%S.wav", "--rotate", "10s", "--for", "36"])
        let (tz, midnight) = zoneWithMidnightSoon(secondsToMidnight: 12)
        let local = try RecordProcess(jas: jas, arguments: [
            "--server", steady.name, "--ports", "loopback:capture_1",
            "--output", "\(folder)/local/%Y%m%d/%H%M%S%z.wav", "--rotate", "10s", "--for", "36"],
            environment: ["TZ": tz])

        // A sample clock 1,000 ppm fast: 10 s of the wall clock hold 480,480 frames.
        let fastSummary = try XCTUnwrap(fast.finish(timeout: 120), fast.stderr)
        XCTAssertEqual(fast.process.terminationStatus, 0, fast.stderr)
        let fastPaths = try XCTUnwrap(fastSummary["paths"] as? [String])
        XCTAssertGreaterThanOrEqual(fastPaths.count, 4, "\(fastPaths)")
        let fastLog = logEvents(try XCTUnwrap(fastSummary["log_path"] as? String))
        // A dummy jackd that xruns restarts its timing from the late cycle:
        // the time it lost has no frames; a file with an xrun is not counted.
        let xruns = fastLog.filter { ["xrun", "gap"].contains($0["event"] as? String) }.compactMap { $0["at_frame"] as? Int }
        var firstFrame = 0
        for (index, path) in fastPaths.enumerated() {
            let file = try SoundFileReader(path: path)
            defer { firstFrame += Int(file.frames) }
            guard index > 0 else { continue }
            let reference = Double(try XCTUnwrap(file.broadcastTimeReference)) / rate
            let name = (path as NSString).lastPathComponent
            XCTAssertEqual(name.dropFirst(5).prefix(1), "0", "\(name) is not on a 10 s boundary")
            let offBoundary = reference - (reference / 10).rounded() * 10
            // Next to a logged xrun or gap a file may start later than its boundary, within 100 ms: a dummy
            // jackd's clock that jumped in the cycles before the cut leaves the cut on the line before, and
            // the file's TimeReference, measured again once the clock settled, says so (RecordClockTests).
            let startsNearJump = xruns.contains(where: { abs($0 - firstFrame) <= 12000 })
            if startsNearJump {
                XCTAssertTrue((-0.001...0.1).contains(offBoundary), "\(name) starts \(offBoundary * 1000) ms off its boundary, next to xruns at \(xruns)")
            } else {
                XCTAssertLessThan(abs(offBoundary), 0.001, "\(name) starts \(offBoundary * 1000) ms off its boundary")
            }
            if index < fastPaths.count - 1, !xruns.contains(where: { (firstFrame..<(firstFrame + Int(file.frames))).contains($0) }) {
                // Begun late next to a jump (above), the file is shorter by as much (RecordClockTests).
                let due = 10 * rate * 1.001
                XCTAssertTrue(((startsNearJump ? due - rate / 10 : due - 48)...(due + 48)).contains(Double(file.frames)),
                              "\(name) has \(file.frames) frames, \(due) due; it starts at frame \(firstFrame), xruns and gaps at \(xruns)")
            }
        }
        // The rate, once measurable (RecordClockTests): right, or not told.
        if let measured = fastLog.last(where: { $0["event"] as? String == "clock" })?["rate_error_ppm"] as? Double {
            XCTAssertEqual(measured, 1000, accuracy: 20)
            let progress = try XCTUnwrap(fast.objects.last { $0["event"] as? String == "progress" && $0["clock_rate_error_ppm"] is Double },
                                         "no progress line with the clock's rate")
            XCTAssertEqual(progress["clock_rate_error_ppm"] as? Double ?? 0, 1000, accuracy: 20, "\(progress)")
        } else {
            let measurable = measurableSeconds(fastLog, frames: firstFrame, rate: rate)
            XCTAssertLessThan(measurable, 25, "no clock line, although the gaps and xruns left \(measurable) s to measure it in: \(fastLog)")
        }

        // Local time: the new day's first file is in the new day's folder and
        // 0 samples after its own midnight; the change to daylight-saving
        // time 20 s later is a cut, named an hour on with the new offset;
        // no name repeats or goes backwards.
        let localSummary = try XCTUnwrap(local.finish(timeout: 120), local.stderr)
        XCTAssertEqual(local.process.terminationStatus, 0, local.stderr)
        let localPaths = try XCTUnwrap(localSummary["paths"] as? [String])
        let names = localPaths.map { $0.replacingOccurrences(of: "\(folder)/local/", with: "") }
        XCTAssertEqual(Set(names).count, names.count, "\(names)")
        XCTAssertEqual(names, names.sorted(), "names go forward: \(names)")
        let newDay = try XCTUnwrap(names.firstIndex { $0.hasSuffix("/000000\(Self.east(tz)).wav") }, "\(names) (TZ=\(tz))")
        XCTAssertNotEqual(names[newDay].prefix(8), names[newDay - 1].prefix(8), "a new day, a new folder")
        let afterMidnight = try SoundFileReader(path: localPaths[newDay])
        let localLog = logEvents(try XCTUnwrap(localSummary["log_path"] as? String))
        let localXruns = localLog.filter { ["xrun", "gap"].contains($0["event"] as? String) }.compactMap { $0["at_frame"] as? Int }
        let newDayFrame = try localPaths[..<newDay].reduce(0) { $0 + Int(try SoundFileReader(path: $1).frames) }
        let nearXruns = localXruns.contains { abs($0 - newDayFrame) <= 12000 }
        XCTAssertLessThan(Double(try XCTUnwrap(afterMidnight.broadcastTimeReference)), nearXruns ? rate / 10 : 48,
                          "TimeReference from its own midnight (xruns at \(localXruns))")
        let summer = try XCTUnwrap(names.firstIndex { $0.contains("/010020") }, "\(names)")
        XCTAssertEqual(summer, newDay + 2, "00:00:00, 00:00:10, then the change at 00:00:20: \(names)")
        let summerReference = Double(try XCTUnwrap(SoundFileReader(path: localPaths[summer]).broadcastTimeReference))
        // Next to a logged xrun the cut may come late, within 100 ms, as above (a run had xruns at the
        // change and its file began 8 ms after it).
        let summerFrame = try localPaths[..<summer].reduce(0) { $0 + Int(try SoundFileReader(path: $1).frames) }
        if localXruns.contains(where: { abs($0 - summerFrame) <= 12000 }) {
            XCTAssertTrue((3619.999...3620.1).contains(summerReference / rate),
                          "\(summerReference / rate) s after midnight, next to xruns at \(localXruns)")
        } else {
            XCTAssertEqual(summerReference / rate, 3620, accuracy: 0.001, "xruns at \(localXruns)")
        }
        XCTAssertLessThan(abs(midnight - Date().timeIntervalSince1970), 120)
    }

    /// The `+HHMM` strftime writes for the standard offset of `tz` (LOGsHH:MM:SS...).
    private static func east(_ tz: String) -> String {
        let west = tz.dropFirst(3).prefix { "-0123456789:".contains($0) }
        let negative = west.hasPrefix("-")
        let parts = west.trimmingCharacters(in: CharacterSet(charactersIn: "-")).split(separator: ":").map { Int($0)! }
        return String(format: "%@%02d%02d", negative ? "+" : "-", parts[0], parts[1])
    }

    func testATriggeredFileIsNamedByItsFirstFrame() throws {
        let server = try startServer(period: 256, serverArguments: ["-S"])
        let sender = try SignalSender(serverName: server.name, channels: 1, seed: 5)
        // Silent for 4 s of frames from now, then the signal.
        let onset = try XCTUnwrap(sender.session.client?.cycleFrameTime) &+ 4 * 48000
        sender.setOnset(onset)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "signal-sender:out_1", "--utc", "--output", "\(folder)/%H%M%S.wav",
            "--trigger", "-20", "--preroll", "0.5", "--for", "1"])
        let summary = try XCTUnwrap(recorder.finish(timeout: 30), recorder.stderr)
        XCTAssertEqual(recorder.process.terminationStatus, 0, recorder.stderr)
        let path = try XCTUnwrap((summary["paths"] as? [String])?.first)
        // The first frame is the pre-roll's, half a second before the onset,
        // which sounded when the sender rendered it (not 4 s of the wall
        // clock from now: a loaded dummy jackd loses time without frames).
        let onsetSounded = sender.source.onsetSounded.load(ordering: .relaxed)
        XCTAssertNotEqual(onsetSounded, 0, "the sender never rendered the onset")
        let firstFrame = Double(onsetSounded) / 1e9 - 0.5
        let reference = Double(try XCTUnwrap(summary["time_reference"] as? Int)) / rate
        let secondsOfDay = firstFrame.truncatingRemainder(dividingBy: 86_400)
        XCTAssertEqual(reference, secondsOfDay, accuracy: 0.1, "TimeReference")
        var named = time_t(Int(reference))
        var fields = tm()
        gmtime_r(&named, &fields)
        XCTAssertEqual((path as NSString).lastPathComponent,
                       String(format: "%02d%02d%02d.wav", fields.tm_hour, fields.tm_min, fields.tm_sec))
    }
}
