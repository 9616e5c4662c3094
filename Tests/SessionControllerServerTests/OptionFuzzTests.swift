import Foundation
import JackTestSupport
import XCTest

/// Every numeric option of every command, fed what a careless or hostile
/// user types: a usage error naming the option (exit 64), or a run that ends
/// normally or with a clear error (exit 0 or 2), never a signal, never a hang.
final class OptionFuzzTests: JackTestCase {
    let values = ["0", "-1", "nan", "inf", "-inf", "1e300", "abc", ""]

    func testNumericOptionsOfEveryCommandNeverCrashOrHang() throws {
        let server = try startServer(period: 256)
        let folder = NSTemporaryDirectory() + "jas-fuzz-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(folder, 0o700), 0)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let on = ["--server", server.name]
        // What runs when the value is taken: each command briefly.
        let commands: [(base: [String], options: [String])] = [
            (["play"] + on + ["--port", "loopback:playback_1"], ["--frequency", "--level", "--duck-level", "--duck-hold", "--for"]),
            (["record"] + on + ["--ports", "loopback:capture_1"], ["--for", "--buffer", "--preroll", "--channels"]),
            (["meter"] + on + ["--ports", "loopback:capture_1"], ["--for", "--vu-reference", "--k-scale", "--interval"]),
            (["interrupt"] + on, ["--for"]),
            (["selftest"] + on, ["--duration", "--period"]),
            (["latency"] + on, ["--period", "--count"]),
            (["device", "plug", "fuzz-device"] + on, ["--channels"]),
        ]
        var tried = 0, usage = 0, ran = 0
        for (base, options) in commands {
            for option in options {
                for value in values {
                    tried += 1
                    var arguments = base + [option, value]
                    if base[0] == "record" {
                        arguments += ["--output", "\(folder)/take-\(tried).wav", "--overwrite"]
                        if option != "--for" { arguments += ["--for", "0.3"] }
                    } else if ["play", "meter", "interrupt"].contains(base[0]) && option != "--for" {
                        arguments += ["--for", "0.3"]
                    } else if base[0] == "selftest" && option != "--duration" {
                        arguments += ["--duration", "0.3"]
                    } else if base[0] == "latency" && option != "--count" {
                        arguments += ["--count", "1"]
                    }
                    let result = try runBounded(arguments, seconds: 20)
                    let said = "jas \(arguments.joined(separator: " ")) → \(result.status): \(result.output.prefix(300))"
                    XCTAssertFalse(result.timedOut, "hung: \(said)")
                    XCTAssertFalse(result.signalled, "died of a signal: \(said)")
                    XCTAssertTrue([0, 1, 2, 64].contains(result.status), said)
                    if result.status == 64 {
                        usage += 1
                        XCTAssertTrue(result.output.contains(option) || result.output.contains("'\(value)'"),
                                      "the refusal does not name \(option): \(said)")
                    } else {
                        ran += 1
                    }
                }
            }
        }
        print("option fuzz: \(tried) inputs, \(usage) refused as usage errors, \(ran) ran (none crashed or hung)")
    }

    /// The other half of the fuzz: valid values as people type them, negative
    /// levels and gains above all, are taken, not refused as usage errors.
    func testValidNegativeValuesAreAccepted() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let on = ["--server", server.name]
        let cases: [[String]] = [
            ["play"] + on + ["--port", "loopback:playback_1", "--level", "-20", "--for", "0.3"],
            ["play"] + on + ["--port", "loopback:playback_1", "--level", "-0.5", "--duck-level", "-10", "--for", "0.3"],
            ["meter"] + on + ["--ports", "loopback:capture_1", "--vu-reference", "-18", "--for", "0.3"],
            ["meter"] + on + ["--ports", "loopback:capture_1", "--silence-threshold", "-70", "--for", "0.3"],
            ["record"] + on + ["--ports", "loopback:capture_1", "--silence-threshold", "-70", "--silence-hold", "1s",
                               "--for", "0.3", "--output", "\(folder)/a.wav"],
            ["record"] + on + ["--ports", "loopback:capture_1", "--silence-threshold", "-70dBFS", "--for", "0.3",
                               "--output", "\(folder)/b.wav"],
        ]
        for arguments in cases {
            let result = try runBounded(arguments, seconds: 30)
            let said = "jas \(arguments.joined(separator: " ")) → \(result.status): \(result.output.prefix(300))"
            XCTAssertFalse(result.timedOut || result.signalled, said)
            XCTAssertEqual(result.status, 0, said)
        }
    }

    /// Values that pass the option's range but not what they meet: each a
    /// clear error (exit 2) naming the thing, before anything starts.
    func testValuesTheServerOrTheFileCannotTakeAreRefusedClearly() throws {
        let server = try startServer(period: 256)
        let folder = NSTemporaryDirectory() + "jas-fuzz-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(folder, 0o700), 0)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let wide = "\(folder)/wide.wav"
        XCTAssertEqual(try run(["sox", "-n", "-r", "48000", "-c", "65", wide, "synth", "0.2", "sine", "440"]).status, 0)
        let cases: [(arguments: [String], says: [String])] = [
            (["play", "--server", server.name, "--frequency", "24000", "--for", "0.3"], ["--frequency 24000", "half"]),
            (["play", "--server", server.name, "--frequency", "8000", "--for", "0.3", "--route", "a=system:1",
              "--route", "b=system:2", "--route", "c=system:1", "--route", "d=system:2"], ["4 routes", "32000"]),
            (["meter", "--file", wide], ["65 channels", "libebur128"]),
            (["play", "--server", String(repeating: "s", count: 300), "--for", "0.3"], ["server name", "shorter"]),
            (["play", "--server", server.name, "--name", "", "--for", "0.3"], ["client name", "empty"]),
            (["play", "--server", server.name, "--name", String(repeating: "n", count: 80), "--for", "0.3"],
             ["client name", "at most"]),
        ]
        for (arguments, phrases) in cases {
            let result = try runBounded(arguments, seconds: 20)
            let said = "jas \(arguments.joined(separator: " ").prefix(200)) → \(result.status): \(result.output.prefix(400))"
            XCTAssertFalse(result.timedOut || result.signalled, said)
            XCTAssertEqual(result.status, 2, said)
            for phrase in phrases { XCTAssertTrue(result.output.contains(phrase), "should say '\(phrase)': \(said)") }
        }
    }

    /// Runs jas with `arguments`, killing it after `seconds`.
    func runBounded(_ arguments: [String], seconds: Double) throws
        -> (status: Int32, output: String, signalled: Bool, timedOut: Bool) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jas)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = LineCollector.Text()
        output.read(pipe)
        try process.run()
        let deadline = ContinuousClock.now + .seconds(seconds)
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        let timedOut = process.isRunning
        if timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        output.waitForEnd()
        return (process.terminationStatus, output.text, process.terminationReason == .uncaughtSignal && !timedOut,
                timedOut)
    }
}
