import Foundation
import JackTestSupport
import XCTest

/// The live meter as a person sees it: in a real terminal (tmux) of a given
/// size, resized while it runs. Every redraw fits: no line wraps, nothing
/// scrolls, and what was drawn before a resize is gone after it.
final class MeterTerminalTests: JackTestCase {
    /// Runs tmux without Foundation's Process (posix_spawn, every descriptor
    /// above stderr closed, output through a file): the tmux server a first call leaves running
    /// keeps whatever it inherits, and Foundation's Process then never sees
    /// its child end.
    private func tmux(_ arguments: [String]) throws -> String {
        let outputPath = temporaryFolder() + "/tmux.out"
        defer { try? FileManager.default.removeItem(atPath: (outputPath as NSString).deletingLastPathComponent) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // glibc's addclosefrom is not visible from Swift: python closes them before tmux starts.
        let closer = "import os, sys; os.closerange(3, 65536); os.execvp('tmux', sys.argv[1:])"
        let argv = (["python3", "-c", closer, "tmux", "-L", socket] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        XCTAssertEqual(posix_spawnp(&pid, "python3", &actions, nil, argv, environ), 0)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        XCTAssertEqual(status, 0, "tmux \(arguments.joined(separator: " ")): \(output)")
        return output
    }

    private let socket = "jas-meter-test-\(getpid())"

    /// The screen once at least two redraws happened at this size (the seconds counter moved).
    private func settledScreen() throws -> [String] {
        var first: String?
        var screen: [String] = []
        XCTAssertTrue(waitUntil(timeout: 20) {
            guard let text = try? tmux(["capture-pane", "-p", "-t", "meter"]) else { return false }
            screen = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let clock = screen.first { $0.contains(" s") }
            defer { if first == nil { first = clock } }
            return clock != nil && first != nil && clock != first
        }, "the meter never redrew: \(screen)")
        return screen
    }

    func testRedrawsFitNarrowTerminalsAndSurviveResizing() throws {
        let server = try startServer(loopbackChannels: 1, period: 256)
        addTeardownBlock { _ = try? self.tmux(["kill-server"]) }
        let command = "\(jas) meter --server \(server.name) --ports loopback:capture_1 --ports 'system:capture_*' 2>/dev/null"
        _ = try tmux(["new-session", "-d", "-s", "meter", "-x", "40", "-y", "12", command])
        for (columns, rows) in [(40, 12), (20, 5), (90, 20), (30, 3)] {
            _ = try tmux(["resize-window", "-t", "meter", "-x", String(columns), "-y", String(rows)])
            let screen = try settledScreen()
            let drawn = screen.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            let said = "\(columns)×\(rows):\n" + screen.joined(separator: "\n")
            // One programme line, at the top, and each channel at most once: nothing left from before.
            XCTAssertEqual(drawn.filter { $0.contains(" s  M") || $0.hasSuffix(" s") || $0.contains(" s ") }.count, 1, said)
            XCTAssertTrue(drawn.first?.contains(" s") ?? false, said)
            for channel in 1...3 {
                XCTAssertLessThanOrEqual(drawn.filter { $0.hasPrefix(" \(channel) ") }.count, 1, said)
            }
            XCTAssertTrue(drawn.allSatisfy { $0.count < columns }, "a line fills the width and may wrap: \(said)")
            XCTAssertLessThan(drawn.count, rows, said)
            if rows >= 5 {
                XCTAssertEqual(drawn.filter { $0.hasPrefix(" 1 ") || $0.hasPrefix(" 2 ") || $0.hasPrefix(" 3 ") }.count, 3, said)
            } else {
                XCTAssertTrue(drawn.contains { $0.hasPrefix("… ") }, "channels that do not fit are counted: \(said)")
            }
        }
    }
}
