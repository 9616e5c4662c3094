@testable import Capture
import Foundation
import JackRuntime
@testable import Recording
import SoundFile
import XCTest

/// Each rotated file's `bext` TimeReference, end to end through the disk
/// thread without a server: cycles made up with known callback times are
/// handed to the capture as the real-time thread would, and the files are
/// read back. A server whose clock jumps a few cycles before a file starts
/// (jackd's dummy driver after an xrun) is seen by the frame clock only
/// `FrameClock.jumpReadings` cycles after the jump: the file's time is
/// measured again once the clock has settled.
final class FileOriginTests: XCTestCase {
    private let rate = 48000
    private let period = 256

    /// The wall clock, read on the disk thread: UTC is the made-up monotonic time plus `offset`.
    private struct FixedOffsetClock: WallClock {
        let offset: Double
        func read() -> WallClockReading { WallClockReading(utc: offset, monotonicNanoseconds: 0) }
    }

    /// Records `cycles` cycles into files of one second each; each cycle's
    /// callback comes at the true time of its first frame plus `lateness(cycle)`.
    /// Returns each file's TimeReference (and, through `bases`, how the
    /// manifest's closed line says its start was timed).
    private func record(cycles: Int,
                        lateness: (Int) -> Double) throws -> (references: [UInt64], bases: [ManifestLine.TimeBasis?]) {
        let folder = NSTemporaryDirectory() + "jas-origin-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let capture = RealtimeCapture(channels: 1, ringSeconds: Double(cycles * period) / Double(rate) + 1,
                                      sampleRate: rate)
        let manifest = TakeManifest(path: "\(folder)/take.manifest.jsonl")
        try manifest.open()
        let catalogue = TakeCatalogue(manifest: manifest) { problem in XCTFail(problem) }
        let events = EventLog()
        let record: @Sendable (RecordingEvent) -> Void = { events.append($0) }
        let ledger = TakeLedger(channels: 1, limitFrames: Int64(cycles * period))
        let first = try TakeFileSets.claimFirst(paths: [], logPath: nil, overwrite: false, fifo: nil)
        let fileSets = TakeFileSets(
            settings: TakeFileSets.Settings(
                naming: TakeNaming(pattern: "\(folder)/take.wav", rotates: true, channels: 1, perChannel: false, zone: .utc),
                format: RecordingFormat(), rotation: .everyFrames(Int64(rate)), zone: .utc, catalogue: catalogue),
            first: first, channels: 1, ledger: ledger, record: record)
        let settings = DiskWriter.Settings(prerollFrames: 0, triggerLevel: nil, waitsForStart: false,
                                           clock: FixedOffsetClock(offset: Self.utcOfMonotonicZero), captureLatencyFrames: 0)
        let writer = DiskWriter(capture: capture, fileSets: fileSets, ledger: ledger, sampleRate: rate, settings: settings,
                                record: record, currentSampleRate: { [rate] in rate })
        writer.start()
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: period)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 0.25, count: period)
        let inputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
        defer { inputs.deallocate() }
        inputs.initialize(to: buffer)
        for cycle in 0..<cycles {
            let frame = cycle * period
            let called = Self.monotonicStart + Double(frame) / Double(rate) + lateness(cycle)
            let processCycle = ProcessCycle(frameCount: period, inputs: UnsafeBufferPointer(start: inputs, count: 1),
                                            outputs: UnsafeBufferPointer(start: nil, count: 0),
                                            cycleStartFrame: UInt32(truncatingIfNeeded: 4096 + frame))
            capture.capture(processCycle, at: UInt64((called * 1e9).rounded()))
        }
        writer.stopAndWait(reason: "test")
        catalogue.waitUntilWritten()
        let bases = TakeManifest.read(manifest.path).lines.filter { $0.event == .closed }.map(\.timeBasis)
        XCTAssertEqual(events.gapReasons, [], "made-up cycles are continuous")
        let paths = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".wav") }.sorted()
        return (try paths.map { try XCTUnwrap(SoundFileReader(path: "\(folder)/\($0)").broadcastTimeReference, $0) }, bases)
    }

    private static let monotonicStart = 1_000.0
    private static let utcOfMonotonicZero = 1_795_000_000.0

    /// The true TimeReference of frame `frame` whose sound came `late` seconds later than the frames say.
    private func truth(frame: Int, late: Double = 0) -> Double {
        let utc = Self.utcOfMonotonicZero + Self.monotonicStart + Double(frame) / Double(rate) + late
        return (utc - (utc / 86_400).rounded(.down) * 86_400) * Double(rate)
    }

    func testAFileStartedWhileTheServersClockJumpsIsTimedOnItsNewLine() throws {
        // Callbacks 20 µs late; from cycle 372 on the server's cycles come
        // 3 ms later (144 frames): three cycles before the third file starts
        // (frame 96000, cycle 375), so it is told after that file began.
        let jump = 372
        let (references, bases) = try record(cycles: 3 * rate / period + 10) { $0 >= jump ? 0.003 + 20e-6 : 20e-6 }
        // The first file began before any cycle was seen, the third while the jump was not yet told.
        XCTAssertEqual(bases, [.revised, .settled, .revised, .settled])
        XCTAssertEqual(references.count, 4)
        guard references.count == 4 else { return }
        XCTAssertEqual(Double(references[0]), truth(frame: 0, late: 20e-6), accuracy: 2, "the first file")
        XCTAssertEqual(Double(references[1]), truth(frame: 48000, late: 20e-6), accuracy: 2, "the second file, before the jump")
        XCTAssertEqual(Double(references[2]), truth(frame: 96000, late: 0.003 + 20e-6), accuracy: 2,
                       "the third file, begun three cycles after the jump: \(Int64(references[2]) - Int64(references[1])) frames after the second")
        XCTAssertEqual(Double(references[3]), truth(frame: 144000, late: 0.003 + 20e-6), accuracy: 2, "the fourth file")
    }

    func testAFileStartedJustBeforeTheServersClockJumpsKeepsItsTime() throws {
        // The second file starts in cycle 187 (frame 48000), whose callback
        // is 1 ms late (so the clock has not settled then), and the jump
        // comes three cycles later: the file began on the line before it.
        let jump = 190
        let (references, bases) = try record(cycles: 2 * rate / period + 10) { cycle in
            cycle >= jump ? 0.003 + 20e-6 : cycle == 187 ? 0.001 : 20e-6
        }
        XCTAssertEqual(bases, [.revised, .kept, .settled])
        XCTAssertEqual(references.count, 3)
        guard references.count == 3 else { return }
        XCTAssertEqual(Double(references[1]), truth(frame: 48000, late: 20e-6), accuracy: 2, "the second file, before the jump")
        XCTAssertEqual(Double(references[2]), truth(frame: 96000, late: 0.003 + 20e-6), accuracy: 2, "the third file")
    }

    func testAFileStartedAmongLateCallbacksIsTimedOnTheServersLine() throws {
        // A busy machine: cycles 362 to 376 woken 1.5 to 2.1 ms late, long
        // enough to be taken for a jump (at cycle 369) before the third file
        // starts (cycle 375); the callbacks on time again from cycle 377 on
        // move the line back to where it was.
        let (references, _) = try record(cycles: 3 * rate / period + 10) { cycle in
            (362...376).contains(cycle) ? 0.0015 + Double(cycle % 4) * 0.0002 : 20e-6
        }
        XCTAssertEqual(references.count, 4)
        guard references.count == 4 else { return }
        // Within 250 µs: the loop's rate was pulled by the clamped readings.
        XCTAssertEqual(Double(references[2]), truth(frame: 96000, late: 20e-6), accuracy: 12,
                       "the third file: \(Int64(references[2]) - Int64(references[1])) frames after the second")
    }
}

/// The recording's events, as the disk thread records them.
private final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [RecordingEvent] = []

    func append(_ event: RecordingEvent) { lock.withLock { events.append(event) } }

    /// Why each gap was logged.
    var gapReasons: [String] { lock.withLock { events }.compactMap(\.gapReason) }
}
