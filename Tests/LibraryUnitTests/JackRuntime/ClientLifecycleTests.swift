import Foundation
import JackKit
@testable import JackRuntime
import XCTest

/// The lane's bound: a libjack call stuck past it is reported at the bound,
/// never waited for (an open on a server stopped after it was checked).
final class ClientLifecycleTests: XCTestCase {
    func testABodyStuckPastItsBoundIsReportedAtTheBoundNotWaitedFor() throws {
        // A lane of its own: the process's shared lane stays usable.
        let lane = ClientLifecycle()
        let release = DispatchSemaphore(value: 0)
        // Released after 5 s whatever happens: with the bug, the test then
        // ends (and fails on the time) instead of hanging.
        DispatchQueue.global().asyncAfter(deadline: .now() + 5) { release.signal() }
        let started = Date()
        XCTAssertThrowsError(try lane.perform("a stuck open", within: 0.2) { () -> Int in
            release.wait()
            return 1
        }) { error in
            guard case let .libraryWedged(reason)? = error as? JackError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("a stuck open did not return within"), reason)
        }
        // Before the fix the caller waited for the stuck body (it held the result's lock): for ever.
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        XCTAssertNotNil(lane.wedgedReason)
        XCTAssertThrowsError(try lane.perform("the next open", within: 1) { 2 }, "a wedged lane refuses at once")
    }
}
