@testable import Capture
import XCTest

/// When the source watch looks its ports up (no server: the schedule alone).
final class SourceLookScheduleTests: XCTestCase {
    private typealias Schedule = SourceWatch.LookSchedule
    // Two clients alive together, so their identifiers differ.
    private let clients = (NSObject(), NSObject())
    private var first: ObjectIdentifier { ObjectIdentifier(clients.0) }
    private var second: ObjectIdentifier { ObjectIdentifier(clients.1) }

    /// The ticks, of `count`, that look, with the graph's count as `changes` gives it per tick.
    private func looking(_ schedule: inout Schedule, ticks count: Int, client: (Int) -> ObjectIdentifier,
                         changes: (Int) -> Int, away: (Int) -> Bool = { _ in false }) -> [Int] {
        (0..<count).filter { schedule.looks(client: client($0), graphChanges: changes($0), sourcesAway: away($0)) }
    }

    func testAQuietGraphIsLookedAtForHalfASecondThenEveryTwoSeconds() {
        var schedule = Schedule()
        let ticks = looking(&schedule, ticks: 400, client: { _ in self.first }, changes: { _ in 7 })
        let settle = Schedule.settleTicks, idle = Schedule.idleTicks
        XCTAssertEqual(Array(ticks.prefix(settle)), Array(0..<settle), "every tick after the watch began")
        XCTAssertEqual(Array(ticks.dropFirst(settle)), Array(stride(from: settle - 1 + idle, to: 400, by: idle)),
                       "then one in \(idle)")
    }

    func testEveryChangeOfTheGraphIsLookedAtForHalfASecond() {
        var schedule = Schedule()
        // The count moves at tick 300 and again at 310.
        let ticks = looking(&schedule, ticks: 400, client: { _ in self.first },
                            changes: { $0 < 300 ? 0 : $0 < 310 ? 1 : 2 })
        let after = ticks.filter { $0 >= 300 && $0 < 360 }
        XCTAssertEqual(after, Array(300..<(310 + Schedule.settleTicks)), "from the first change to half a second after the last")
        XCTAssertEqual(ticks.filter { $0 > 224 && $0 < 300 }, [], "nothing looked between the last idle look and the change")
    }

    func testAnotherClientIsLookedAtAsAChange() {
        var schedule = Schedule()
        let ticks = looking(&schedule, ticks: 200, client: { $0 < 150 ? self.first : self.second }, changes: { _ in 3 })
        XCTAssertEqual(ticks.filter { $0 >= 130 && $0 < 190 }, Array(150..<(150 + Schedule.settleTicks)),
                       "a server's comeback gives the session a new client, with its own count")
    }

    func testEveryTickLooksWhileSourcesAreAway() {
        var schedule = Schedule()
        let ticks = looking(&schedule, ticks: 300, client: { _ in self.first }, changes: { _ in 0 },
                            away: { (100..<200).contains($0) })
        XCTAssertEqual(ticks.filter { $0 >= 90 && $0 < 210 }, Array(100..<200), "away from 100 to 200: every tick, then quiet")
    }
}
