@testable import Recording
import XCTest

/// The full disk's stage on its own: the outage's account and the clock of
/// its looks for room, without a disk (`RecordDiskFullTests` fills a real one).
final class DiskFullPolicyTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000

    func testAnOutageCountsItsFramesAndLooksForRoomOnceASecond() {
        var policy = DiskFullPolicy()
        XCTAssertFalse(policy.isFull)
        XCTAssertNil(policy.folderToLookAt(now: 10 * second), "not full: nothing to look at")
        policy.countUnwritten(480)
        XCTAssertNil(policy.end(), "frames counted while not full are no outage")

        policy.filled(at: 96_000, path: "/srv/takes/a.wav", now: 10 * second)
        XCTAssertTrue(policy.isFull)
        policy.countUnwritten(256)
        policy.countUnwritten(0)
        policy.countUnwritten(256)
        XCTAssertNil(policy.folderToLookAt(now: 10 * second + second - 1), "within the second")
        XCTAssertEqual(policy.folderToLookAt(now: 11 * second), "/srv/takes")
        XCTAssertNil(policy.folderToLookAt(now: 11 * second + second / 2), "looked at half a second ago")
        XCTAssertEqual(policy.folderToLookAt(now: 12 * second), "/srv/takes")

        let outage = policy.end()
        XCTAssertEqual(outage, DiskFullPolicy.Outage(at: 96_000, frames: 512, folder: "/srv/takes", lastLook: 12 * second))
        XCTAssertFalse(policy.isFull)
        XCTAssertNil(policy.end(), "ended once")
    }

    func testAFileInTheWorkingFolderWatchesTheWorkingFolder() {
        var policy = DiskFullPolicy()
        policy.filled(at: 0, path: "take.wav", now: 0)
        XCTAssertEqual(policy.folderToLookAt(now: second), ".")
    }
}
