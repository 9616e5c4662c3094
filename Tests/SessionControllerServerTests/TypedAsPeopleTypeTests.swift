import Foundation
import JackTestSupport
import XCTest

/// Commands as people type them: every option whose help shows a negative
/// example takes it as typed (`--level -20`), and every command that works on
/// a server says when there is no such server, never an idle-looking answer.
final class TypedAsPeopleTypeTests: JackTestCase {
    /// Every subcommand's path, nested ones too (`device plug`), from `jas --help`.
    private func subcommands(_ path: [String] = []) throws -> [[String]] {
        let help = try run([jas] + path + ["--help"]).output
        guard let start = help.range(of: "SUBCOMMANDS:") else { return [path] }
        // The block after SUBCOMMANDS: up to its first blank line, a name at two spaces' indent a command.
        let block = help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
            .prefix { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        let names = block.compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first else { return nil }
            return String(name).replacingOccurrences(of: "(default)", with: "")
        }
        XCTAssertLessThan(path.count, 3, "subcommands nest deeper than jas has: \(path)")
        return try names.flatMap { try subcommands(path + [$0]) }
    }

    /// The options of a command's help with a negative example in their text: (option, example).
    private func negativeExamples(_ command: [String]) throws -> [(option: String, example: String)] {
        let help = try run([jas] + command + ["--help"]).output
        var found: [(String, String)] = []
        var option: String?
        var text = ""
        func close() {
            if let option, let match = text.range(of: #"e\.g\. -[0-9]+(\.[0-9]+)?"#, options: .regularExpression) {
                found.append((option, String(text[match].dropFirst("e.g. ".count))))
            }
        }
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("--"), line.hasPrefix("  ") {
                close()
                option = String(trimmed.prefix { $0 != " " && $0 != "," })
                text = String(trimmed)
            } else if line.hasPrefix("    ") {
                text += " " + trimmed
            } else {
                close()
                option = nil
                text = ""
            }
        }
        close()
        return found
    }

    func testEveryNegativeExampleInTheHelpIsTakenAsTyped() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = "no-such-server-\(getpid())"
        var walked = 0
        var options: [String] = []
        for command in try subcommands() {
            for (option, example) in try negativeExamples(command) {
                walked += 1
                options.append("\(command.joined(separator: " ")) \(option) \(example)")
                var arguments = command + [option, example, "--server", server]
                if command == ["record"] { arguments += ["--output", "\(folder)/take.wav"] }
                let result = try run([jas] + arguments, timeout: 60)
                let said = "jas \(arguments.joined(separator: " ")) → \(result.status): \(result.output.prefix(300))"
                XCTAssertNotEqual(result.status, 64, "refused as typed: \(said)")
                XCTAssertFalse(result.output.contains("Missing value"), said)
                // Parsed, it went on to the server, which is not there.
                XCTAssertEqual(result.status, 2, said)
                XCTAssertTrue(result.output.contains(server), said)
            }
        }
        print("negative examples taken as typed: \(options.joined(separator: "; "))")
        // The level options people type most are among them.
        for expected in ["play --level", "play --duck-level", "meter --vu-reference", "meter --silence-threshold",
                         "record --trigger", "record --silence-threshold"] {
            XCTAssertTrue(options.contains { $0.hasPrefix(expected + " ") }, "\(expected) shows no negative example: \(options)")
        }
        XCTAssertGreaterThanOrEqual(walked, 6)
    }

    func testSelftestOnAServerWithOneLoopbackPairNamesOutAndIn() throws {
        let server = try startServer(loopbackChannels: 1, period: 256)
        let result = try run([jas, "selftest", "--server", server.name, "--duration", "0.5"])
        XCTAssertEqual(result.status, 2, result.output)
        XCTAssertTrue(result.output.contains("loopback:capture_2"), result.output)
        XCTAssertTrue(result.output.contains("--out PORT --in PORT"), result.output)
        // And what it says works.
        let named = try run([jas, "selftest", "--server", server.name, "--duration", "0.5",
                             "--out", "loopback:playback_1", "--in", "loopback:capture_1"])
        XCTAssertEqual(named.status, 0, named.output)
    }

    func testEveryCommandOnAServerThatIsNotRunningSaysSo() throws {
        let server = "no-such-server-\(getpid())"
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let commands: [[String]] = [
            ["status"], ["sessions"], ["sessions", "--json"], ["monitor"], ["play", "--for", "1"],
            ["record", "--output", "\(folder)/take.wav", "--for", "1"], ["meter", "--for", "1"],
            ["interrupt", "--for", "1"], ["device", "plug", "somewhere"], ["latency", "--count", "1"], ["selftest"],
        ]
        for command in commands {
            let result = try run([jas] + command + ["--server", server], timeout: 60)
            let said = "jas \(command.joined(separator: " ")) → \(result.status): \(result.output.prefix(300))"
            XCTAssertEqual(result.status, 2, said)
            XCTAssertTrue(result.output.contains("no JACK server named '\(server)' is running"), said)
        }
    }
}
