import Foundation
@testable import Recording
import XCTest

/// The take's sets of files, in a folder of their own and without a
/// server: what is claimed while the take is prepared, what opens at a
/// rotation, what a name that is taken costs, what the manifest says of
/// each set as it closes.
final class TakeFileSetsTests: XCTestCase {
    private let rate = 48_000
    private var folder = ""

    private struct FixedClock: WallClock {
        func read() -> WallClockReading { WallClockReading(utc: 1_795_000_000, monotonicNanoseconds: 0) }
    }

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "jas-sets-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func naming(_ name: String, rotates: Bool) -> TakeNaming {
        TakeNaming(pattern: "\(folder)/\(name)", rotates: rotates, channels: 1, perChannel: false, zone: .utc)
    }

    private func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: "\(folder)/\(name)") }

    func testTheFirstSetNamedAheadIsClaimedWithTheLogAndOpenedWhilePrepared() throws {
        var first = try TakeFileSets.claimFirst(paths: ["\(folder)/take.wav"], logPath: "\(folder)/logs/take.log",
                                                overwrite: false, fifo: nil)
        XCTAssertTrue(exists("take.wav"))
        XCTAssertTrue(exists("logs/take.log"), "the log's folder made and its file claimed")
        try first.open(channels: 1, sampleRate: rate, format: RecordingFormat())
        XCTAssertNotNil(first.files, "named ahead: open while prepared")
        // A second take on the same names is refused while the first holds them, and leaves them be.
        XCTAssertThrowsError(try TakeFileSets.claimFirst(paths: ["\(folder)/take.wav"], logPath: nil,
                                                         overwrite: true, fifo: nil)) { error in
            XCTAssertEqual(error as? RecordingError, .outputBusy(path: "\(folder)/take.wav"))
        }
        first.abandon()
        XCTAssertFalse(exists("take.wav"), "the take did not start: what its claim created goes")
        XCTAssertFalse(exists("logs/take.log"))
    }

    func testAFileItReplacesIsUntouchedUntilTheSetOpens() throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(folder)/take.wav", contents: Data("before".utf8)))
        let first = try TakeFileSets.claimFirst(paths: ["\(folder)/take.wav"], logPath: nil, overwrite: true, fifo: nil)
        // Refused after the claim (a manifest that cannot be opened, say): the file the user had is as it was.
        first.abandon()
        XCTAssertEqual(try String(contentsOfFile: "\(folder)/take.wav", encoding: .utf8), "before")
    }

    func testAFirstSetNamedByItsFirstFrameOpensAtTheTakesStart() throws {
        var first = try TakeFileSets.claimFirst(paths: [], logPath: nil, overwrite: false, fifo: nil)
        try first.open(channels: 1, sampleRate: rate, format: RecordingFormat())
        XCTAssertNil(first.files, "named by its first frame: not yet")
        let ledger = TakeLedger(channels: 1, limitFrames: nil)
        let sets = TakeFileSets(settings: TakeFileSets.Settings(naming: naming("take-%H%M%S.wav", rotates: false),
                                                                format: RecordingFormat(), zone: .utc),
                                first: first, channels: 1, ledger: ledger, record: { _ in })
        XCTAssertNil(sets.files)
        let time = TakeTime(sampleRate: rate, captureLatencyFrames: 0, wallClock: FixedClock())
        try sets.begin(time: time)
        // 1_795_000_000 is 11:06:40 UTC.
        XCTAssertEqual(sets.files?.paths, ["\(folder)/take-110640.wav"])
        XCTAssertEqual(ledger.snapshot.paths, ["\(folder)/take-110640.wav"])
        XCTAssertNotNil(ledger.snapshot.timeReference, "a WAV's bext: the take's TimeReference")
        sets.finish(time: time)
        XCTAssertNil(sets.files)
    }

    func testARotationSkipsANameThatIsTakenAndTheManifestListsEachSetsGaps() throws {
        let manifest = TakeManifest(path: "\(folder)/take.manifest.jsonl")
        try manifest.open()
        let catalogue = TakeCatalogue(manifest: manifest) { problem in XCTFail(problem) }
        // Another program's file where the second set would go.
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(folder)/take-002.wav", contents: Data("theirs".utf8)))
        let events = Events()
        let ledger = TakeLedger(channels: 1, limitFrames: nil)
        var first = try TakeFileSets.claimFirst(paths: ["\(folder)/take-001.wav"], logPath: nil, overwrite: false, fifo: nil)
        try first.open(channels: 1, sampleRate: rate, format: RecordingFormat())
        let sets = TakeFileSets(settings: TakeFileSets.Settings(naming: naming("take.wav", rotates: true),
                                                                format: RecordingFormat(), rotation: .everyFrames(1_000),
                                                                zone: .utc, catalogue: catalogue),
                                first: first, channels: 1, ledger: ledger, record: { events.append($0) })
        let time = TakeTime(sampleRate: rate, captureLatencyFrames: 0, wallClock: FixedClock())
        try sets.begin(time: time)
        XCTAssertEqual(sets.framesUntilCut(at: 0, time: time), 1_000)
        let silence = [Float](repeating: 0, count: 1_000)
        try silence.withUnsafeBufferPointer { try XCTUnwrap(sets.files).write($0, frames: 1_000) }
        ledger.noteGap(at: 900, frames: 200, reason: "stall")
        XCTAssertEqual(sets.framesUntilCut(at: 1_000, time: time), 0)

        try sets.open(at: 1_000, reason: .rotation, time: time)
        XCTAssertEqual(sets.index, 2)
        XCTAssertEqual(sets.files?.paths, ["\(folder)/take-002-2.wav"], "the taken name skipped, never replaced")
        XCTAssertEqual(try String(contentsOfFile: "\(folder)/take-002.wav", encoding: .utf8), "theirs")
        XCTAssertEqual(sets.framesUntilCut(at: 1_250, time: time), 750)
        try silence.withUnsafeBufferPointer { try XCTUnwrap(sets.files).write($0, frames: 500) }
        sets.finish(time: time)
        catalogue.waitUntilWritten()

        XCTAssertEqual(events.all.filter { if case .partSkipped = $0 { return true } else { return false } }.count, 1)
        XCTAssertTrue(events.all.contains(.rotated(path: "\(folder)/take-002-2.wav", atFrame: 1_000)))
        XCTAssertEqual(ledger.snapshot.paths, ["\(folder)/take-001.wav", "\(folder)/take-002-2.wav"])
        let closed = TakeManifest.read(manifest.path).lines.filter { $0.event == .closed }
        XCTAssertEqual(closed.map(\.index), [1, 2])
        XCTAssertEqual(closed.map(\.frames), [1_000, 500])
        XCTAssertEqual(closed.map(\.gaps), [[ManifestLine.Gap(atFrame: 900, frames: 100, reason: "stall", written: true)],
                                            [ManifestLine.Gap(atFrame: 0, frames: 100, reason: "stall", written: true)]])
    }
}

/// The events the sets record.
private final class Events: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [RecordingEvent] = []
    func append(_ event: RecordingEvent) { lock.withLock { events.append(event) } }
    var all: [RecordingEvent] { lock.withLock { events } }
}
