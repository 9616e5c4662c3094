import Foundation
import JackTestSupport
import Recording
import XCTest

/// `jas verify`: a signed take (`jas keygen`, `jas record --sign-key`) is
/// proven intact; each way of altering it, each on its own copy, is caught
/// and named; a key that did not sign it is refused.
final class RecordVerifyTests: JackTestCase {
    func testACleanTakeVerifiesAndEveryAlterationIsCaughtAndNamed() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["key", "other"] {
            let made = try run([jas, "keygen", "--output", "\(folder)/\(name)"])
            XCTAssertEqual(made.status, 0, made.output)
        }
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: "\(folder)/key")[.posixPermissions] as? Int, 0o600)
        let again = try run([jas, "keygen", "--output", "\(folder)/key"])
        XCTAssertEqual(again.status, 2, "a key is never replaced: \(again.output)")

        try FileManager.default.createDirectory(atPath: "\(folder)/take", withIntermediateDirectories: true)
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "system:capture_*", "--output", "\(folder)/take/t-%H%M%S.wav", "--utc",
            "--rotate", "1s", "--for", "4", "--sign-key", "\(folder)/key"])
        let summary = try XCTUnwrap(recorder.finish(timeout: 60), recorder.stderr)
        let manifest = try XCTUnwrap(summary["manifest_path"] as? String)
        let lines = try manifestLines(manifest)
        let closed = TakeManifest.read(manifest).lines.filter { $0.event == .closed }
        XCTAssertGreaterThanOrEqual(closed.count, 4, "\(lines.count) lines")
        guard closed.count >= 4 else { return }

        // The take as recorded: intact, every line signed by the key.
        let clean = try verify(manifest, key: "\(folder)/key.pub")
        XCTAssertEqual(clean.status, 0, "\(clean.report)")
        XCTAssertEqual(clean.report["files_intact"] as? Int, closed.count)
        XCTAssertEqual(clean.report["lines_signed"] as? Int, lines.count)
        // Another key did not sign it.
        let otherKey = try verify(manifest, key: "\(folder)/other.pub")
        XCTAssertEqual(otherKey.status, 1)
        XCTAssertEqual(Set(otherKey.kinds), ["other_key"], "\(otherKey.report)")

        // One byte of one file changed; a file truncated; a file gone.
        let altered = try copyOfTake(folder, "altered") { take in
            let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: "\(take)/\(closed[1].path)"))
            try handle.seek(toOffset: 5000)
            let byte = try XCTUnwrap(handle.readData(ofLength: 1).first)
            try handle.seek(toOffset: 5000)
            handle.write(Data([byte ^ 0x01]))
            try handle.close()
        }
        XCTAssertEqual(altered.kinds, ["file_altered"], "\(altered.report)")
        XCTAssertEqual(altered.paths, [closed[1].path])
        let truncated = try copyOfTake(folder, "truncated") { take in
            XCTAssertEqual(truncate("\(take)/\(closed[2].path)", off_t(try XCTUnwrap(closed[2].bytes)) - 100), 0)
        }
        XCTAssertEqual(truncated.kinds, ["file_truncated"], "\(truncated.report)")
        XCTAssertEqual(truncated.paths, [closed[2].path])
        let missing = try copyOfTake(folder, "missing") { take in
            try FileManager.default.removeItem(atPath: "\(take)/\(closed[3].path)")
        }
        XCTAssertEqual(missing.kinds, ["file_missing"], "\(missing.report)")
        XCTAssertEqual(missing.paths, [closed[3].path])

        // A line removed; two lines swapped.
        let removed = try copyOfTake(folder, "removed") { take in
            try write(lines.enumerated().filter { $0.offset != 3 }.map(\.element), to: "\(take)/t.manifest.jsonl")
        }
        XCTAssertEqual(removed.report["first_broken_line"] as? Int, 4, "\(removed.report)")
        XCTAssertEqual(Set(removed.kinds), ["chain_broken"])
        let swapped = try copyOfTake(folder, "swapped") { take in
            var order = lines
            order.swapAt(2, 3)
            try write(order, to: "\(take)/t.manifest.jsonl")
        }
        XCTAssertEqual(swapped.report["first_broken_line"] as? Int, 3, "\(swapped.report)")

        // A line edited (a file's length) and every later link made again,
        // as anyone can without the key: the chain is whole, the signatures are not.
        let index = try XCTUnwrap(lines.firstIndex { String(decoding: $0, as: UTF8.self).contains(#""event":"closed""#) })
        let edited = try copyOfTake(folder, "edited") { take in
            var changed = lines
            let text = String(decoding: changed[index], as: UTF8.self)
            let frames = try XCTUnwrap(closed.first?.frames)
            changed[index] = Array(text.replacingOccurrences(of: "\"frames\":\(frames),", with: "\"frames\":\(frames - 480),").utf8)
            XCTAssertNotEqual(changed[index], lines[index])
            for later in (index + 1)..<changed.count {
                let old = String(decoding: changed[later], as: UTF8.self)
                let link = ManifestChain.link(to: changed[later - 1])
                changed[later] = Array(old.replacingOccurrences(of: #"\"prev":"[0-9a-f]{64}""#, with: "\"prev\":\"\(link)\"",
                                                                  options: .regularExpression).utf8)
            }
            try write(changed, to: "\(take)/t.manifest.jsonl")
        }
        let editedWithoutKey = try verify(edited.manifest, key: nil)
        XCTAssertEqual(editedWithoutKey.status, 0, "the chain alone cannot show it: \(editedWithoutKey.report)")
        XCTAssertEqual(edited.status, 1)
        XCTAssertEqual(edited.report["first_broken_line"] as? Int, index + 1, "\(edited.report)")
        XCTAssertEqual(Set(edited.kinds), ["signature_invalid"])

        // What a person reads names the file and the line.
        let text = try run([jas, "verify", altered.manifest, "--key", "\(folder)/key.pub"])
        XCTAssertEqual(text.status, 1)
        XCTAssertTrue(text.output.contains(closed[1].path) && text.output.contains("altered") && text.output.contains("NOT INTACT"), text.output)
    }

    // MARK: - helpers

    struct Verdict {
        var status: Int32
        var report: [String: Any]
        var manifest = ""
        var findings: [[String: Any]] { report["findings"] as? [[String: Any]] ?? [] }
        /// The kinds of its problems (notes left out).
        var kinds: [String] { findings.filter { $0["problem"] as? Bool == true }.compactMap { $0["kind"] as? String } }
        var paths: [String] { findings.filter { $0["problem"] as? Bool == true }.compactMap { $0["path"] as? String } }
    }

    func verify(_ manifest: String, key: String?) throws -> Verdict {
        let result = try run([jas, "verify", manifest, "--json"] + (key.map { ["--key", $0] } ?? []))
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], result.output)
        return Verdict(status: result.status, report: report, manifest: manifest)
    }

    /// The take copied to its own folder, changed there, then verified with the key.
    func copyOfTake(_ folder: String, _ name: String, change: (String) throws -> Void) throws -> Verdict {
        let take = "\(folder)/\(name)"
        try FileManager.default.copyItem(atPath: "\(folder)/take", toPath: take)
        try change(take)
        return try verify("\(take)/t.manifest.jsonl", key: "\(folder)/key.pub")
    }

    func manifestLines(_ path: String) throws -> [[UInt8]] {
        ManifestChain.lines(of: try XCTUnwrap(FileManager.default.contents(atPath: path))).lines
    }

    func write(_ lines: [[UInt8]], to path: String) throws {
        try Data(lines.flatMap { $0 + [UInt8(ascii: "\n")] }).write(to: URL(fileURLWithPath: path))
    }
}
