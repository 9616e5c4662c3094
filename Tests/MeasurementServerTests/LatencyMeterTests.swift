import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
import Measurement
import Synchronization
import XCTest

/// Round-trip latency on real jackd servers: jackd's -L loopback (exactly one
/// period), a delay client of known fractional delay inserted after it, an
/// inverting path, a forced xrun, a silent path, and calibration.
final class LatencyMeterTests: JackTestCase {
    var calibrationPath: String!

    override func setUp() {
        super.setUp()
        calibrationPath = NSTemporaryDirectory() + "/jas-calibration-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json"
    }

    override func tearDown() {
        unlink(calibrationPath)
        super.tearDown()
    }

    func meter(_ serverName: String, out: String = "loopback:playback_1", in input: String = "loopback:capture_1")
        throws -> LatencyMeter {
        var configuration = LatencyMeter.Configuration(serverName: serverName, outputPort: out, inputPort: input)
        configuration.calibration = LatencyCalibrationStore(path: calibrationPath)
        let meter = LatencyMeter(configuration: configuration)
        try meter.start()
        addTeardownBlock { meter.stop() }
        return meter
    }

    /// Readings until `valid` valid ones, `limit` in all, none for `timeout`
    /// seconds, or a minute in all. (Under xruns the meter gives a spoilt
    /// reading about every window: the limit leaves room for them.)
    func readings(_ meter: LatencyMeter, valid: Int, limit: Int = 40, timeout: Double = 5) -> [LatencyReading] {
        var all: [LatencyReading] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while all.filter(\.valid).count < valid, all.count < limit, ContinuousClock.now < deadline,
              let reading = meter.nextReading(timeout: timeout) {
            all.append(reading)
        }
        return all
    }

    func testServerLoopbackReadsExactlyOnePeriodAtPeriods64_256_1024() throws {
        for period in [64, 256, 1024] {
            let server = try startServer(period: period)
            let meter = try meter(server.name)
            // At 64 frames (1.33 ms) jackd's dummy backend on this 2-core VM
            // overruns its own timer about 16 times a second with no client
            // at all ("JackTimedDriver::Process XRun" in its log; -S and -R do
            // not help), more under load, and each xrun spoils the reading of
            // its window (341 ms). Up to 60 windows are read; a valid one is
            // judged as exactly as at the other periods. When none was free of
            // xruns (seen in CI, where the client also fell so far behind that
            // jackd skipped it for seconds: "graph not finished"), every
            // reading must say so and jackd must have logged the xruns:
            // spoilt readings never pass as numbers.
            let small = period < 128
            let all = readings(meter, valid: small ? 1 : 3, limit: small ? 60 : 30, timeout: small ? 15 : 5)
            let valid = all.filter(\.valid)
            if small && valid.isEmpty {
                // The client can fall so far behind that jackd skips it for
                // seconds on end ("was not finished"): then not even a spoilt
                // reading comes, and jackd's log must say why.
                let logged = server.log.components(separatedBy: "XRun").count - 1
                let skipped = server.log.components(separatedBy: "was not finished").count - 1
                print("period 64: none of \(all.count) windows was free of xruns (jackd logged \(logged) xruns, "
                      + "skipped the client \(skipped) times)")
                XCTAssertTrue(all.allSatisfy { $0.problem == .xrun && $0.measuredFrames == nil }, "\(all.map(\.problem))")
                XCTAssertGreaterThanOrEqual(logged, max(10, all.count), "readings blamed on xruns jackd did not report")
            } else {
                XCTAssertEqual(valid.count, small ? 1 : 3, "period \(period)")
            }
            for reading in valid {
                XCTAssertEqual(reading.measuredFrames ?? -1, Double(period), accuracy: 0.001, "period \(period)")
                XCTAssertEqual(reading.measuredMs ?? -1, Double(period) * 1000 / 48000, accuracy: 0.0001)
                XCTAssertEqual(reading.periodFrames, period)
                XCTAssertFalse(reading.inverted)
                let reported = try meter.session.inputLatencyRange.max + meter.session.outputLatencyRange.max
                XCTAssertEqual(reading.reportedFrames, reported)
                XCTAssertEqual(reading.excessFrames ?? -1, (reading.measuredFrames ?? 0) - Double(reported), accuracy: 1e-9)
            }
            meter.stop()
            server.stop()
        }
    }

    func testFractionalDelayInsertedInThePathIsReadToAHundredthOfAFrame() throws {
        let server = try startServer(period: 256)
        for fraction in [0.25, 0.5, 10.75] {
            let inserted = 32 + fraction
            let name = "delay-\(Int(fraction * 100))"
            let line = try DelayLineClient(name: name, serverName: server.name, delay: inserted)
            try line.listen(to: "loopback:capture_1")
            let meter = try meter(server.name, in: "\(name):out")
            let valid = readings(meter, valid: 2).filter(\.valid)
            XCTAssertEqual(valid.count, 2, "delay \(inserted)")
            for reading in valid {
                XCTAssertEqual(reading.measuredFrames ?? -1, 256 + inserted, accuracy: 0.01, "delay \(inserted)")
            }
            meter.stop()
        }
    }

    func testInvertedPathIsReportedWithTheSameDelay() throws {
        let server = try startServer(period: 256)
        let line = try DelayLineClient(name: "invert", serverName: server.name, delay: 40, inverting: true)
        try line.listen(to: "loopback:capture_1")
        let meter = try meter(server.name, in: "invert:out")
        // Rehearsal 42: a loaded machine made every one of 40 windows an xrun (the debug-built filter and
        // meter share the test process); the meter was right to refuse them, so read on to the deadline.
        let all = readings(meter, valid: 2, limit: 200)
        let valid = all.filter(\.valid)
        XCTAssertEqual(valid.count, 2, "\(all.map { $0.problem?.rawValue ?? "valid" })")
        for reading in valid {
            XCTAssertTrue(reading.inverted)
            XCTAssertEqual(reading.measuredFrames ?? -1, 256 + 40, accuracy: 0.001)
        }
    }

    func testXrunDuringAWindowInvalidatesThatReadingOnly() throws {
        let server = try startServer(period: 256)
        let line = try DelayLineClient(name: "staller", serverName: server.name, delay: 16)
        try line.listen(to: "loopback:capture_1")
        let meter = try meter(server.name, in: "staller:out")
        XCTAssertTrue(readings(meter, valid: 1).contains(where: \.valid))
        let xrunsBefore = meter.session.xrunCount
        line.stall(seconds: 0.1)
        XCTAssertTrue(waitUntil { meter.session.xrunCount > xrunsBefore }, "the stall did not make an xrun")
        var after: [LatencyReading] = []
        while after.filter(\.valid).count < 2, after.count < 10, let reading = meter.nextReading() { after.append(reading) }
        let spoilt = try XCTUnwrap(after.first, "no reading after the xrun")
        XCTAssertFalse(spoilt.valid, "the window with the xrun gave a number: \(spoilt)")
        XCTAssertEqual(spoilt.problem, .xrun)
        XCTAssertNil(spoilt.measuredFrames)
        XCTAssertEqual(after.filter(\.valid).count, 2, "measuring did not recover: \(after)")
        for reading in after where reading.valid {
            XCTAssertEqual(reading.measuredFrames ?? -1, 256 + 16, accuracy: 0.001)
        }
    }

    func testXrunsCloserThanTwoWindowsStillGiveReadingsThatSaySo() throws {
        // Under load (CI: a dummy-backend xrun every 70 ms) every window was
        // spoilt while it settled, and the meter went silent for 10 s. Here an
        // xrun every 150 ms (a window is 341 ms, and settles for as long).
        let server = try startServer(period: 256)
        let staller = try DelayLineClient(name: "staller", serverName: server.name, delay: 16)
        let meter = try meter(server.name)
        XCTAssertTrue(readings(meter, valid: 1).contains(where: \.valid))
        let stormOver = Atomic<Bool>(false)
        let storm = Thread {
            let end = ContinuousClock.now + .seconds(4)
            while ContinuousClock.now < end {
                staller.stall(seconds: 0.008)
                usleep(150_000)
            }
            stormOver.store(true, ordering: .releasing)
        }
        let xrunsBefore = meter.session.xrunCount
        storm.start()
        XCTAssertTrue(waitUntil(timeout: 5) { meter.session.xrunCount > xrunsBefore }, "the storm made no xrun")
        // Readings of windows that ended before the first xrun may still come; from the first it spoilt on, every one is spoilt.
        var during: [LatencyReading] = []
        let until = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < until, let reading = meter.nextReading(timeout: 1) {
            if !during.isEmpty || reading.problem == .xrun { during.append(reading) }
        }
        XCTAssertGreaterThan(meter.session.xrunCount - xrunsBefore, 10, "the storm made too few xruns to test")
        XCTAssertGreaterThanOrEqual(during.count, 4, "the meter fell silent: \(during)")
        XCTAssertTrue(during.allSatisfy { !$0.valid && $0.problem == .xrun && $0.measuredFrames == nil }, "\(during)")
        // And it measures again once the storm is over.
        XCTAssertTrue(waitUntil(timeout: 10) { stormOver.load(ordering: .acquiring) })
        let after = readings(meter, valid: 1, limit: 40, timeout: 10)
        XCTAssertEqual(after.last(where: \.valid)?.measuredFrames ?? -1, 256, accuracy: 0.001, "\(after)")
    }

    func testSilentPathGivesNoNumberAndSaysWhy() throws {
        let server = try startServer(period: 256)
        // Nothing is ever sent to loopback:playback_2.
        let meter = try meter(server.name, in: "loopback:capture_2")
        // Two readings that no xrun spoilt (one that an xrun spoilt says so, and is set aside).
        var all: [LatencyReading] = []
        for _ in 0..<10 where all.count < 2 {
            guard let reading = meter.nextReading(timeout: 5) else { break }
            if reading.problem != .xrun { all.append(reading) }
        }
        XCTAssertEqual(all.count, 2)
        for reading in all {
            XCTAssertFalse(reading.valid)
            XCTAssertEqual(reading.problem, .signalTooWeak)
            XCTAssertNil(reading.measuredFrames)
            XCTAssertNil(reading.excessFrames)
            XCTAssertTrue(reading.message.contains("signal"), reading.message)
        }
    }

    func testCalibrationShowsInSessionLatencyAndDownstream() throws {
        let server = try startServer(period: 256)
        let store = LatencyCalibrationStore(path: calibrationPath)
        // The dummy backend reports capture = 1 period, playback = 2 periods.
        func sessionLatencies() throws -> (input: Int, output: Int, downstream: Int) {
            let session = AudioSession(clientName: "calibrated", serverName: server.name, recordConsent: .givenByCaller,
                                       latencyCalibration: store)
            defer { session.close() }
            try session.setCategory(.playAndRecord, mode: .measurement)
            session.setPreferredInputPortNames(["system:capture_1"])
            session.setPreferredOutputPortNames(["system:playback_1"])
            try session.setPreferredInputNumberOfChannels(1)
            try session.setPreferredOutputNumberOfChannels(1)
            try session.setActive(true)
            // A client downstream of the session's output sees its capture latency.
            let downstream = try Client(name: "downstream", serverName: server.name)
            defer { downstream.close() }
            let listener = try downstream.registerPort("in", flags: .input)
            try downstream.activate()
            try downstream.connect("calibrated:out_1", to: "downstream:in")
            downstream.recomputeLatencies()
            XCTAssertTrue(waitUntil { listener.latencyRange(.capture).max == (try? session.inputLatencyRange.max) })
            return (try session.inputLatencyRange.max, try session.outputLatencyRange.max,
                    listener.latencyRange(.capture).max)
        }
        let before = try sessionLatencies()
        XCTAssertEqual(before.input, 256)
        XCTAssertEqual(before.output, 512)
        XCTAssertEqual(before.downstream, 256)

        let correction = try store.addRoundTripExcess(37.4, server: server.name, playbackPort: "system:playback_1",
                                                      capturePort: "system:capture_1")
        XCTAssertEqual(correction, LatencyCorrection(captureFrames: 18, playbackFrames: 19))
        let after = try sessionLatencies()
        XCTAssertEqual(after.input, 256 + 18)
        XCTAssertEqual(after.output, 512 + 19)
        XCTAssertEqual(after.downstream, 256 + 18)

        // A second calibration adds to the first (it was measured against the corrected report).
        try store.addRoundTripExcess(-7, server: server.name, playbackPort: "system:playback_1",
                                     capturePort: "system:capture_1")
        XCTAssertEqual(store.correction(server: server.name, capturePorts: ["system:capture_1"],
                                        playbackPorts: ["system:playback_1"]),
                       LatencyCorrection(captureFrames: 15, playbackFrames: 15))
        XCTAssertEqual(store.correction(server: "another", capturePorts: ["system:capture_1"],
                                        playbackPorts: ["system:playback_1"]), .none)
    }

    func testMeasuredExcessStoredAsCalibrationMakesTheNextExcessZero() throws {
        // A device whose ports declare no latency but loop back a period later:
        // JACK under-reports, the excess is positive and calibration fixes it.
        let server = try startServer(period: 256)
        let device = try SimulatedDevice(name: "rig", serverName: server.name, type: .usbAudio, channels: 1)
        defer { device.unplug() }
        let first = try XCTUnwrap(readings(try meter(server.name, out: "rig:playback_1", in: "rig:capture_1"), valid: 1)
            .first(where: \.valid))
        let excess = try XCTUnwrap(first.excessFrames)
        XCTAssertGreaterThan(excess, 100, "measured \(first.measuredFrames ?? -1), reported \(first.reportedFrames.map(String.init) ?? "none")")
        try LatencyCalibrationStore(path: calibrationPath)
            .addRoundTripExcess(excess, server: server.name, playbackPort: "rig:playback_1", capturePort: "rig:capture_1",
                                reportedCapture: first.reportedCaptureFrames, reportedPlayback: first.reportedPlaybackFrames)
        let second = try meter(server.name, out: "rig:playback_1", in: "rig:capture_1")
        let again = try XCTUnwrap(readings(second, valid: 1).first(where: \.valid))
        XCTAssertEqual(again.measuredFrames ?? -1, first.measuredFrames ?? 0, accuracy: 0.001)
        XCTAssertEqual(again.excessFrames ?? -1, 0, accuracy: 0.5, "reported \(again.reportedFrames.map(String.init) ?? "none")")
    }

    func testNegativeExcessIsNeverSplitBelowZero() throws {
        // JACK reports capture 0 and playback 512 for a path that measures 256.
        let store = LatencyCalibrationStore(path: calibrationPath)
        let correction = try store.addRoundTripExcess(-256, server: "s", playbackPort: "p", capturePort: "c",
                                                      reportedCapture: 0, reportedPlayback: 512)
        XCTAssertEqual(correction, LatencyCorrection(captureFrames: 0, playbackFrames: -256))
        let even = try store.addRoundTripExcess(256 + 100, server: "s", playbackPort: "p", capturePort: "c",
                                                reportedCapture: 0, reportedPlayback: 256)
        XCTAssertEqual(even, LatencyCorrection(captureFrames: 50, playbackFrames: 50))
    }
}

/// A long-running measurement outlives its server.
final class LatencyMeterRestartTests: JackTestCase {
    func testReadingsResumeAfterTheServerRestarts() throws {
        let name = LoopbackServer.uniqueName()
        let first = try startServer(name: name, period: 256)
        var configuration = LatencyMeter.Configuration(serverName: name, outputPort: "loopback:playback_1",
                                                       inputPort: "loopback:capture_1")
        configuration.calibration = nil
        let meter = LatencyMeter(configuration: configuration)
        try meter.start()
        defer { meter.stop() }
        var before: [LatencyReading] = []
        while !before.contains(where: \.valid), before.count < 10, let reading = meter.nextReading() { before.append(reading) }
        XCTAssertEqual(before.first(where: \.valid)?.measuredFrames ?? -1, 256, accuracy: 0.001, "\(before)")
        first.stop()
        _ = try startServer(name: name, period: 512)
        var after: [LatencyReading] = []
        while !after.contains(where: \.valid), after.count < 10, let reading = meter.nextReading(timeout: 10) {
            after.append(reading)
        }
        let resumed = try XCTUnwrap(after.first(where: \.valid), "no valid reading after the restart: \(after)")
        XCTAssertEqual(resumed.periodFrames, 512)
        XCTAssertEqual(resumed.measuredFrames ?? -1, 512, accuracy: 0.001)
    }
}
