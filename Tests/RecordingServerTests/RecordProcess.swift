import Foundation
import JackTestSupport
import XCTest

/// A `jas record` process, its JSON Lines collected as they come.
final class RecordProcess: @unchecked Sendable {
    let process = Process()
    private let lines: LineCollector
    private let errors = LineCollector.Text()

    init(jas: String, arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: jas)
        process.arguments = ["record", "--json"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        lines = LineCollector(output)
        self.errors.read(errors)
        try process.run()
    }

    deinit { if process.isRunning { process.terminate() } }

    var objects: [[String: Any]] { lines.objects }
    var stderr: String { errors.text }

    /// The first object whose "event" is `name`.
    func event(_ name: String) -> [String: Any]? { objects.first { $0["event"] as? String == name } }

    /// The frames written as of the latest progress line (0 before one came).
    var framesWritten: Int { objects.last { $0["event"] as? String == "progress" }?["frames_written"] as? Int ?? 0 }

    /// The frames written as of the first progress line after event `name`
    /// whose peaks show sound on every channel (nil: none yet): the audio
    /// was flowing before that many frames were written.
    func framesWhenSoundingAfter(_ name: String) -> Int? {
        let lines = objects
        guard let index = lines.firstIndex(where: { $0["event"] as? String == name }) else { return nil }
        return lines[index...].first { line in
            guard line["event"] as? String == "progress", let peaks = line["peak_dbfs"] as? [Any], !peaks.isEmpty else { return false }
            return peaks.allSatisfy { $0 is NSNumber }
        }?["frames_written"] as? Int
    }

    /// Waits for the process to end (at most `timeout` seconds) and returns its summary line.
    func finish(timeout: Double = 30) -> [String: Any]? {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        lines.waitForEnd()
        return event("summary")
    }
}
