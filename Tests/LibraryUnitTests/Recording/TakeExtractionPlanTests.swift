import Foundation
@testable import Recording
import XCTest

/// How a clip is planned from a manifest's files, without a server: the
/// pieces each file gives and the silence between files.
final class TakeExtractionPlanTests: XCTestCase {
    /// Three files of a take, two seconds each at 48 kHz: the second follows
    /// the first 1.3 ms late (its start timed again after a jump of the
    /// server's clock before the cut), the third two seconds after the
    /// second (the logger was away). `unwrittenBeforeSecond`: the second set
    /// began after audio the logger could not write (a full disk).
    func plan(unwrittenBeforeSecond: Bool = false, secondIndex: Int = 2) throws -> [TakeExtraction.Piece] {
        let folder = NSTemporaryDirectory() + "jas-extract-plan-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let manifest = TakeManifest(path: "\(folder)/take.manifest.jsonl")
        try manifest.open()
        for (name, index, start) in [("a.wav", 1, 1000.0), ("b.wav", secondIndex, 1002.0013), ("c.wav", secondIndex + 1, 1006.0)] {
            XCTAssertTrue(FileManager.default.createFile(atPath: "\(folder)/\(name)", contents: Data()))
            var line = ManifestLine(event: .closed, path: name, index: index, startUTC: start, start: ManifestLine.iso(start),
                                    utcOffset: 0, sampleRate: 48000, channels: 1, device: 1, inode: UInt64(index))
            line.frames = 96000
            line.endUTC = start + 2
            line.gaps = name == "b.wav" && unwrittenBeforeSecond
                ? [ManifestLine.Gap(atFrame: 0, frames: 62, reason: "disk-full", written: false)] : []
            try manifest.append(line)
        }
        return try TakeExtraction(manifest: TakeManifest(path: "\(folder)/take.manifest.jsonl"), fromUTC: 1001.5, toUTC: 1007).pieces
    }

    func testTheNextSetOfATakeGoesOnWithoutMadeUpSilenceButTheLoggersAbsenceIsSilence() throws {
        let pieces = try plan()
        XCTAssertEqual(pieces.count, 4, "\(pieces)")
        guard pieces.count == 4 else { return }
        guard case .file(_, 72000, 24000) = pieces[0] else { return XCTFail("the first file's last half second: \(pieces)") }
        guard case let .file(second, 0, 96000) = pieces[1] else { return XCTFail("the second file whole, at once: \(pieces)") }
        XCTAssertTrue(second.hasSuffix("/b.wav"), second)
        guard case let .silence(frames, _) = pieces[2] else { return XCTFail("silence while the logger was away: \(pieces)") }
        XCTAssertEqual(Double(frames), (1006.0 - 1004.0013) * 48000, accuracy: 1)
        guard case .file(_, 0, 48000) = pieces[3] else { return XCTFail("the third file's first second: \(pieces)") }
    }

    func testAudioLeftUnwrittenOrAnotherRunBeforeTheNextFileIsStillSilence() throws {
        for (unwritten, index) in [(true, 2), (false, 7)] {
            let pieces = try plan(unwrittenBeforeSecond: unwritten, secondIndex: index)
            guard pieces.count == 5, case let .silence(frames, _) = pieces[1] else {
                XCTFail("unwritten \(unwritten), index \(index): silence between the first two files: \(pieces)")
                continue
            }
            XCTAssertEqual(frames, 62)
        }
    }
}
