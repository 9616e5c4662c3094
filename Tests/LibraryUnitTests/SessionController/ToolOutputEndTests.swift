import Foundation
import JackTestSupport
import XCTest

/// The tests judge a tool by its whole output, so they wait for the end of
/// its pipes: that end must be seen as soon as the tool has exited, every
/// time, or the test waits out its timeout instead (15 s each time).
final class ToolOutputEndTests: XCTestCase {
    func testTheEndOfAQuickProgramsOutputIsSeenEveryTime() throws {
        var missed = 0
        var runs = 0
        for run in 0..<300 where missed < 3 {
            runs += 1
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "echo '{\"run\": \(run)}'; echo said >&2"]
            let output = Pipe(), errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            let lines = LineCollector(output)
            let text = LineCollector.Text()
            text.read(errors)
            try process.run()
            guard lines.waitForEnd(timeout: 2), text.waitForEnd(timeout: 2) else {
                missed += 1
                continue
            }
            XCTAssertEqual(lines.objects.first?["run"] as? Int, run)
            XCTAssertEqual(text.text, "said\n")
        }
        XCTAssertEqual(missed, 0, "the end of \(missed) of \(runs) outputs was not seen within 2 s of the program's start")
    }
}
