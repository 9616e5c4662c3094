import Foundation
import JackTestSupport
@testable import Recording
import XCTest

/// The frame clock and the take's time zone, pure: cycles and wall-clock
/// readings made up with known truth (a sample clock off by a known rate,
/// callbacks woken late, a wall clock that drifts or is set), and a real
/// zone's daylight-saving changes.
final class FrameClockTests: XCTestCase {
    private let rate = 48000
    private let period = 256

    /// A take's cycles: the sample clock runs `sampleClockPPM` fast against
    /// the monotonic clock, each callback is late by `lateness(cycle)`, and
    /// the wall clock reads `wall(monotonic)`. Returns the clock after
    /// `seconds` and a function giving each frame's true UTC.
    private func run(seconds: Double, sampleClockPPM: Double, lateness: (Int) -> Double,
                     wall: @escaping (Double) -> Double, notices: inout [FrameClock.Notice]) -> (FrameClock, (Double) -> Double) {
        var clock = FrameClock(sampleRate: rate)
        let start = 1_000.0
        let framesPerSecond = Double(rate) * (1 + sampleClockPPM / 1e6)
        let truth: (Double) -> Double = { frame in start + frame / framesPerSecond }
        var cycle = 0
        while Double(cycle * period) / framesPerSecond < seconds {
            let frame = Int64(cycle * period)
            let called = truth(Double(frame)) + lateness(cycle)
            clock.observeCycle(frame: frame, frames: period, monotonicNanoseconds: UInt64(called * 1e9),
                               continuous: cycle > 0)
            // The disk thread looks at the wall clock a little after the callback.
            let readAt = called + 0.002
            if let notice = clock.observeWallClock(WallClockReading(utc: wall(readAt), monotonicNanoseconds: UInt64(readAt * 1e9))) {
                notices.append(notice)
            }
            cycle += 1
        }
        return (clock, { wall(truth($0)) })
    }

    func testFramesAreCarriedToTheWallClockWithinAFractionOfAMillisecond() throws {
        var generator = seededGenerator()
        let jitter = (0..<20_000).map { _ in Double.random(in: 0...100e-6, using: &generator) }
        for (sampleClockPPM, wallPPM) in [(1000.0, 0.0), (-1000.0, 0.0), (500.0, -200.0), (0.0, 1000.0)] {
            var notices: [FrameClock.Notice] = []
            let (clock, truth) = run(seconds: 60, sampleClockPPM: sampleClockPPM, lateness: { jitter[$0 % jitter.count] },
                                     wall: { 1.8e9 + $0 * (1 + wallPPM / 1e6) }, notices: &notices)
            XCTAssertEqual(notices, [], "a drifting clock is not a step")
            // The last frames seen and a frame 5 s ahead: callbacks are late by 50 µs on average.
            let lastFrame = Double(Int(60 * Double(rate) * (1 + sampleClockPPM / 1e6)) / period * period)
            for frame in [lastFrame, lastFrame + 5 * Double(rate)] {
                let error = try XCTUnwrap(clock.utc(ofFrame: frame)) - truth(frame)
                XCTAssertLessThan(abs(error), 150e-6, "sample clock \(sampleClockPPM) ppm, wall \(wallPPM) ppm: \(error * 1e6) µs")
                XCTAssertEqual(try XCTUnwrap(clock.frame(atUTC: truth(frame))), frame, accuracy: 0.15 * Double(rate) / 1000)
            }
            // Frames per wall-clock second against the nominal rate.
            let expected = ((1 + sampleClockPPM / 1e6) / (1 + wallPPM / 1e6) - 1) * 1e6
            XCTAssertEqual(try XCTUnwrap(clock.rateErrorPPM), expected, accuracy: 2, "sample \(sampleClockPPM), wall \(wallPPM)")
        }
    }

    func testALateCycleMovesNothing() throws {
        var notices: [FrameClock.Notice] = []
        let (steady, truth) = run(seconds: 30, sampleClockPPM: 100, lateness: { _ in 20e-6 }, wall: { $0 }, notices: &notices)
        // The same take, its last-but-ten cycle woken 20 ms late (a busy machine).
        let cycles = Int(30 * Double(rate) * 1.0001) / period
        let (jolted, _) = run(seconds: 30, sampleClockPPM: 100, lateness: { $0 == cycles - 10 ? 0.020 : 20e-6 },
                              wall: { $0 }, notices: &notices)
        let frame = Double(cycles * period)
        let moved = try XCTUnwrap(jolted.utc(ofFrame: frame)) - XCTUnwrap(steady.utc(ofFrame: frame))
        XCTAssertLessThan(abs(moved), 20e-6, "one late cycle moved the clock \(moved * 1e6) µs")
        XCTAssertLessThan(abs(try XCTUnwrap(steady.utc(ofFrame: frame)) - truth(frame)), 60e-6)
    }

    func testAServerClockThatJumpsIsFollowedAndItsRateMeasuredAnew() throws {
        // jackd's dummy driver after an xrun: from cycle 4000 on, every callback comes 3 ms later.
        var notices: [FrameClock.Notice] = []
        let jump = 4000
        let (clock, truth) = run(seconds: 60, sampleClockPPM: 300, lateness: { $0 >= jump ? 0.003 + 20e-6 : 20e-6 },
                                 wall: { $0 }, notices: &notices)
        let frame = Double(Int(59 * Double(rate) * 1.0003) / period * period)
        XCTAssertEqual(try XCTUnwrap(clock.utc(ofFrame: frame)), truth(frame) + 0.003, accuracy: 100e-6)
        XCTAssertEqual(try XCTUnwrap(clock.rateErrorPPM), 300, accuracy: 2)
    }

    func testAJumpIsPlacedByItsEarliestReadingAndTheClockSettlesOnItsNewLine() throws {
        // From cycle 4000 on the server's cycles come 3 ms later; the eight
        // callbacks that make the jump known are late besides, by up to 2 ms
        // (a busy machine), one of them by only 50 µs.
        let jump = 4000
        let extra = [1.9e-3, 50e-6, 1.2e-3, 2.0e-3, 0.9e-3, 1.5e-3, 1.1e-3, 1.8e-3]
        var clock = FrameClock(sampleRate: rate)
        _ = clock.observeWallClock(WallClockReading(utc: 0, monotonicNanoseconds: 0))
        let truth = { (frame: Double, cycle: Int) in 1_000 + frame / Double(self.rate) + (cycle >= jump ? 0.003 : 0) }
        var settledAgain: Int?
        for cycle in 0..<(jump + 40) {
            let frame = Int64(cycle * period)
            let late = (jump..<(jump + extra.count)).contains(cycle) ? extra[cycle - jump] : 0
            clock.observeCycle(frame: frame, frames: period, monotonicNanoseconds: UInt64((truth(Double(frame), cycle) + 20e-6 + late) * 1e9),
                               continuous: cycle > 0)
            if cycle == jump - 1 { XCTAssertTrue(clock.isSettled, "settled before the jump") }
            if (jump..<(jump + extra.count)).contains(cycle) { XCTAssertFalse(clock.isSettled, "cycle \(cycle): the jump is not yet known") }
            if cycle >= jump, settledAgain == nil, clock.isSettled { settledAgain = cycle }
        }
        XCTAssertEqual(clock.lineStart, Int64(jump * period), "the new line holds from the jump's first cycle")
        // The run's earliest reading places the line: the next readings agree with it at once.
        let settled = try XCTUnwrap(settledAgain, "the clock settles after the jump")
        XCTAssertLessThanOrEqual(settled - jump, 2 * FrameClock.jumpReadings, "settled at cycle \(settled)")
        // The jump's first frame, read back from the new line.
        let frame = Double(jump * period)
        XCTAssertEqual(try XCTUnwrap(clock.utc(ofFrame: frame)), truth(frame, jump) + 20e-6, accuracy: 100e-6)
    }

    func testTheRateIsMeasuredAcrossJumpsNoneOfThemTwentySecondsApart() throws {
        // A loaded machine: the dummy driver's timing jumps every 8 s (xruns); the take lasts 36 s.
        var notices: [FrameClock.Notice] = []
        let jumps = stride(from: 1500, to: 7000, by: 1500).map { $0 }
        let (clock, _) = run(seconds: 36, sampleClockPPM: -500,
                             lateness: { cycle in Double(jumps.filter { $0 <= cycle }.count) * 0.003 + 20e-6 },
                             wall: { $0 }, notices: &notices)
        XCTAssertEqual(try XCTUnwrap(clock.rateErrorPPM, "measured over the pieces between the jumps"), -500, accuracy: 3)
    }

    func testAStarvedServerLosingTimeInSmallStepsIsNotASlowClock() throws {
        // A dummy jackd on a loaded machine (docs/JACK-FINDINGS.md): whenever its thread is late past the next
        // cycle, it restarts its timing from there, so time passes without frames, in steps from a few
        // microseconds to milliseconds; and the callbacks are woken late, mostly by a little, sometimes by
        // milliseconds. A sample clock 250 ppm fast; a step every three, two or one second(s) on average:
        // at one a second, most pairs of seconds hold one.
        for (seed, stepsEvery) in (1...4).flatMap({ seed in [3.0, 2.0, 1.0].map { (UInt64(seed), $0) } }) {
            var generator = SeededGenerator(state: seed)
            var lost = 0.0
            var lateness: [Double] = []
            let cyclesPerSecond = Double(rate) / Double(period)
            for _ in 0..<Int(120 * cyclesPerSecond) {
                if Double.random(in: 0..<1, using: &generator) < 1 / (stepsEvery * cyclesPerSecond) {
                    lost += Double.random(in: 5e-6...1.5e-3, using: &generator)
                }
                let woken = Double.random(in: 0..<1, using: &generator)
                let late = woken < 0.7 ? Double.random(in: 20e-6...150e-6, using: &generator)
                    : woken < 0.95 ? Double.random(in: 150e-6...1e-3, using: &generator)
                    : Double.random(in: 1e-3...4e-3, using: &generator)
                lateness.append(lost + late)
            }
            var notices: [FrameClock.Notice] = []
            let (clock, _) = run(seconds: 110, sampleClockPPM: 250, lateness: { lateness[$0] }, wall: { $0 }, notices: &notices)
            // Right, or (only when steps leave under 20 s of seconds between them) unknown.
            guard let measured = clock.rateErrorPPM else {
                XCTAssertEqual(stepsEvery, 1, "seed \(seed), a step every \(stepsEvery) s: no rate")
                continue
            }
            XCTAssertEqual(measured, 250, accuracy: 2,
                           "seed \(seed), a step every \(stepsEvery) s: \(lost * 1000) ms lost in steps is not the sample clock's rate")
        }
    }

    func testAStepIsNoticedOnceAndFollowed() throws {
        var notices: [FrameClock.Notice] = []
        let (clock, _) = run(seconds: 20, sampleClockPPM: 0, lateness: { _ in 10e-6 },
                             wall: { $0 + ($0 >= 1_012 ? 3.7 : 0) }, notices: &notices)
        XCTAssertEqual(notices.count, 1, "\(notices)")
        if case let .step(seconds)? = notices.first { XCTAssertEqual(seconds, 3.7, accuracy: 0.001) }
        // A frame after the step is at the new clock's time.
        let frame = 19.0 * Double(rate)
        XCTAssertEqual(try XCTUnwrap(clock.utc(ofFrame: frame)), 1_000 + 19 + 3.7, accuracy: 100e-6)
    }

    func testBoundariesFollowTheZonesClockAcrossDaylightSavingChanges() throws {
        let berlin = RecordingTimeZone.zone(try XCTUnwrap(TimeZone(identifier: "Europe/Berlin")))
        // 2026-03-29 01:00:00 UTC: 02:00 CET becomes 03:00 CEST.
        let spring = 1_774_746_000.0
        XCTAssertEqual(berlin.nextBoundary(after: spring - 15, period: 10), spring - 10)
        XCTAssertEqual(berlin.nextBoundary(after: spring - 5, period: 10), spring)
        XCTAssertEqual(berlin.nextBoundary(after: spring - 5, period: 3600), spring)
        XCTAssertEqual(berlin.format("%H:%M:%S%z", at: spring), "03:00:00+0200")
        XCTAssertEqual(berlin.secondsOfDay(at: spring), 3 * 3600)
        // 2026-10-25 01:00:00 UTC: 03:00 CEST becomes 02:00 CET, the hour shown twice.
        let autumn = 1_792_890_000.0
        XCTAssertEqual(berlin.nextBoundary(after: autumn - 5, period: 10), autumn)
        XCTAssertEqual(berlin.nextBoundary(after: autumn - 5, period: 3600), autumn)
        XCTAssertEqual(berlin.nextBoundary(after: autumn + 1, period: 3600), autumn + 3600)
        XCTAssertEqual(berlin.format("%H:%M:%S%z", at: autumn - 10), "02:59:50+0200")
        XCTAssertEqual(berlin.format("%H:%M:%S%z", at: autumn), "02:00:00+0100")
        // A day's period cuts at the zone's midnight, 23 or 25 hours apart on those days.
        let midnightBefore = 1_774_738_800.0 // 2026-03-29 00:00 CET
        XCTAssertEqual(berlin.nextBoundary(after: midnightBefore, period: 86_400), midnightBefore + 23 * 3600)
        XCTAssertEqual(RecordingTimeZone.utc.nextBoundary(after: 1_800_000_003.5, period: 15), 1_800_000_015)
    }
}
