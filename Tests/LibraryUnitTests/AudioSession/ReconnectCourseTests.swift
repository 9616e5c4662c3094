@testable import JackAudioSession
import JackKit
import XCTest

/// The reconnect's rules for one loss, decided on their own (no server, no
/// clock): when it stops, when it pauses, when it opens, and that a damaged
/// metadata store is said once per loss.
final class ReconnectCourseTests: XCTestCase {
    let damage = JackError.metadataStoreDamaged(path: "/dev/shm/jack_db-0", reason: "__db.002 is empty")

    /// A look the step must not take.
    func unasked<T>(_ what: String) -> () -> T {
        { XCTFail("\(what) was looked at"); fatalError("unreachable") }
    }

    func testAnAttemptStopsOnceTheLossIsOverOrTheSessionIsGone() {
        var course = ReconnectCourse(generation: 7)
        XCTAssertEqual(course.next(generation: 8, sinceLoss: .zero, limit: nil, storeDamage: { nil }, serverAway: { false }),
                       .stop, "the loss was answered, the session closed or was lost again")
        XCTAssertEqual(course.next(generation: nil, sinceLoss: .zero, limit: nil, storeDamage: { nil }, serverAway: { false }),
                       .stop, "the session was released")
        XCTAssertEqual(course.next(generation: 7, sinceLoss: .zero, limit: nil, storeDamage: { nil }, serverAway: { false }),
                       .open)
    }

    /// A replaced server registry ends the course, whether the server is
    /// back or not (no open of this process can succeed again), and is
    /// looked at before the store and the server; within the limit only.
    func testAReplacedRegistryEndsTheCourseAsWedged() {
        var course = ReconnectCourse(generation: 2)
        XCTAssertEqual(course.next(generation: 2, sinceLoss: .seconds(1), limit: nil, registryReplaced: { "replaced" },
                                   storeDamage: unasked("the store"), serverAway: unasked("the server")),
                       .wedged(reason: "replaced"))
        XCTAssertEqual(course.next(generation: 2, sinceLoss: .seconds(1), limit: nil, registryReplaced: { nil },
                                   storeDamage: { nil }, serverAway: { false }), .open)
        XCTAssertEqual(course.next(generation: 3, sinceLoss: .seconds(1), limit: nil,
                                   registryReplaced: unasked("the registry"), storeDamage: { nil }, serverAway: { false }),
                       .stop, "an answered loss looks at nothing")
    }

    /// The limit counts from the loss on the monotonic clock (what the
    /// thread passes as `sinceLoss`), whatever the wall clock did meanwhile.
    func testTheLimitCountsFromTheLoss() {
        var course = ReconnectCourse(generation: 1)
        func step(after seconds: Double, limit: Double?) -> ReconnectCourse.Step {
            course.next(generation: 1, sinceLoss: .seconds(seconds), limit: limit, storeDamage: { nil },
                        serverAway: { false })
        }
        XCTAssertEqual(step(after: 9.9, limit: 10), .open)
        XCTAssertEqual(step(after: 10.1, limit: 10), .stop)
        XCTAssertEqual(step(after: 86_400, limit: nil), .open, "no limit: for ever")
        XCTAssertEqual(step(after: 0.001, limit: 0), .stop, "a limit of 0: one look, then no more")
        XCTAssertEqual(course.next(generation: 1, sinceLoss: .seconds(11), limit: 10, storeDamage: unasked("the store"),
                                   serverAway: unasked("the server")), .stop, "past the limit, nothing is looked at")
    }

    /// A damaged store is said at the first attempt that sees it, and not
    /// again for the same loss, whether the look at its files or an open
    /// found it; no client is opened meanwhile, and the server is not
    /// looked at. A new loss says it again.
    func testADamagedStoreIsSaidOncePerLossAndNothingIsOpenedMeanwhile() {
        var course = ReconnectCourse(generation: 3)
        XCTAssertEqual(course.next(generation: 3, sinceLoss: .seconds(1), limit: nil, storeDamage: { damage },
                                   serverAway: unasked("the server")), .pause(say: damage))
        XCTAssertEqual(course.next(generation: 3, sinceLoss: .seconds(2), limit: nil, storeDamage: { damage },
                                   serverAway: unasked("the server")), .pause(say: nil))
        XCTAssertNil(course.openFailed(damage), "said already")
        // Repaired: the server is looked at again, and opened once it is there.
        XCTAssertEqual(course.next(generation: 3, sinceLoss: .seconds(3), limit: nil, storeDamage: { nil },
                                   serverAway: { true }), .pause(say: nil))
        XCTAssertEqual(course.next(generation: 3, sinceLoss: .seconds(4), limit: nil, storeDamage: { nil },
                                   serverAway: { false }), .open)

        var next = ReconnectCourse(generation: 4)
        XCTAssertEqual(next.next(generation: 4, sinceLoss: .zero, limit: nil, storeDamage: { damage }, serverAway: { false }),
                       .pause(say: damage), "a new loss says it again")
    }

    /// An open that fails on a damaged store (libjack's open found it
    /// first) says it, once; other failures say nothing.
    func testAnOpenThatFailsOnADamagedStoreSaysItOnce() {
        var course = ReconnectCourse(generation: 5)
        XCTAssertNil(course.openFailed(nil))
        XCTAssertNil(course.openFailed(.serverNotRunning(server: "x", status: 1)))
        XCTAssertEqual(course.openFailed(damage), damage)
        XCTAssertNil(course.openFailed(damage))
        XCTAssertEqual(course.next(generation: 5, sinceLoss: .zero, limit: nil, storeDamage: { damage },
                                   serverAway: unasked("the server")), .pause(say: nil))
        // A store left locked (the open's caller found a jackd asleep on it) is said the same way.
        let locked = JackError.metadataStoreLocked(path: "/dev/shm/jack_db-0", reason: "jackd waits on a lock in __db.002")
        var other = ReconnectCourse(generation: 6)
        XCTAssertEqual(other.openFailed(locked), locked)
        XCTAssertNil(other.openFailed(locked))
    }
}
