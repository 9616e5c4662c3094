import Foundation
@testable import Recording
import XCTest

/// The manifest's chain and signatures, on manifests written here by
/// `TakeManifest` (no server: what is checked is the file).
final class ManifestChainTests: XCTestCase {
    func testLinesWrittenBeforeTheChainAreSaidAndATornLineIsNoProblem() throws {
        let folder = NSTemporaryDirectory() + "jas-chain-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/take.manifest.jsonl"
        // Two lines as an older jas wrote them (no link), then a run of this one.
        let old = #"{"channels":1,"device":1,"event":"opened","index":1,"inode":1,"path":"a.wav","sample_rate":48000,"start":"x","start_utc":1,"utc_offset":0}"#
        try Data((old + "\n" + old.replacingOccurrences(of: "a.wav", with: "b.wav") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let key = ManifestSigningKey()
        var line = ManifestLine(event: .opened, path: "c.wav", index: 3, startUTC: 2, start: "y", utcOffset: 0,
                                sampleRate: 48000, channels: 1, device: 1, inode: 2)
        do { // a run, which ends (its manifest closed) at the end of the block
            let manifest = TakeManifest(path: path, signingKey: key)
            try manifest.open()
            try manifest.append(line)
            line.path = "d.wav"
            try manifest.append(line)
        }
        var verification = try ManifestVerification(manifestPath: path, key: key.publicKey)
        XCTAssertTrue(verification.intact, "\(verification.findings)")
        XCTAssertEqual(verification.linesSigned, 2)
        XCTAssertEqual(verification.findings.map(\.kind).filter { $0 == .beforeTheChain }.count, 1)
        // A line cut short by a crash is not part of the manifest, and the next run cuts it off.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"channels":1,"dev"#.utf8))
        try handle.close()
        verification = try ManifestVerification(manifestPath: path, key: key.publicKey)
        XCTAssertTrue(verification.intact)
        XCTAssertTrue(verification.findings.contains { $0.kind == .tornLastLine })
        let next = TakeManifest(path: path, signingKey: key)
        try next.open()
        line.path = "e.wav"
        try next.append(line)
        verification = try ManifestVerification(manifestPath: path, key: key.publicKey)
        XCTAssertTrue(verification.intact, "\(verification.findings)")
        XCTAssertEqual(verification.lines, 5)
        // A line put in by hand without a link, after the chain began, is caught.
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text += old.replacingOccurrences(of: "a.wav", with: "f.wav") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        verification = try ManifestVerification(manifestPath: path)
        XCTAssertEqual(verification.firstBrokenLine, 6, "\(verification.findings)")
    }

    func testASignatureSplitsOffExactlyAndAPathCannotForgeOne() {
        let body = Array(#"{"path":"x,\"signature\":\"AAAA\"}.wav"}"#.utf8)
        XCTAssertNil(ManifestChain.split(body).signature, "a quoted name is not a signature")
        let signed = ManifestChain.signed(body, signature: Data([1, 2, 3]))
        let split = ManifestChain.split(signed)
        XCTAssertEqual(split.body, body)
        XCTAssertEqual(split.signature, Data([1, 2, 3]))
    }
}
