import ArgumentParser
import JackAudioSession
import Foundation
import LoopbackHarness
import Measurement

/// `jas latency`: sub-sample round-trip latency against what JACK reports.
struct Latency: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure the round-trip latency of a path with sub-sample resolution, next to what JACK reports.",
        discussion: """
            Plays a multi-tone signal out of --out and captures it on --in (a loopback cable, or jackd's -L \
            loopback ports), and reads the delay from the tones' phases: one reading per 16384 frames. Each \
            reading gives the measured delay, the latency JACK reports for the path (capture + playback, \
            including a stored calibration), the excess (measured − reported) and the polarity. A reading \
            spoilt by an xrun, a weak or noisy signal is reported as not valid, without numbers.
            Without --server, starts a private headless jackd with loopback ports and stops it afterwards.
            --calibrate stores the median excess of the valid readings for this server and these ports; every \
            session then adds it to the latency JACK reports for them (half to capture, half to playback).
            Exit status 0 when at least one valid reading came.
            """
    )

    @Option(help: "Use this running JACK server instead of starting a private one.")
    var server: String?

    @Option(name: .customLong("out"), help: "Port the test signal is sent to.")
    var outputPort: String = "loopback:playback_1"

    @Option(name: .customLong("in"), help: "Port the test signal comes back on.")
    var inputPort: String = "loopback:capture_1"

    @Option(help: ArgumentHelp("Period in frames: the private server's -p (default 256), or a request to a running server.",
                               discussion: "Without it a running server keeps its period; with it every client on that server gets the new one."))
    var period: Int?

    @Option(help: "Stop after this many valid readings (default: run until interrupted; 10 with --calibrate).")
    var count: Int?

    @Flag(help: "Store the median excess as this path's latency correction.")
    var calibrate = false

    @Flag(help: "One JSON object per reading (JSON Lines) instead of text.")
    var json = false

    func validate() throws {
        try OptionCheck.period(period)
        if let count, count < 1 { throw ValidationError("--count must be at least 1, got \(count)") }
    }

    func run() throws {
        let choice = try ServerChoice(server: server, command: "latency", period: period ?? 256, loopbackChannels: 1,
                                      quiet: json)
        let serverName = choice.name
        // The private server outlives the meter's session.
        defer { withExtendedLifetime(choice) {} }
        var configuration = LatencyMeter.Configuration(serverName: serverName, outputPort: outputPort, inputPort: inputPort)
        if server != nil { configuration.preferredPeriodFrames = period }
        let json = json
        configuration.onNotice = { notice in
            if json { Output.jsonLine(notice) } else { Output.diagnostic("jas latency: " + notice.message) }
        }
        let meter = LatencyMeter(configuration: configuration)
        do {
            try meter.start()
        } catch {
            Output.diagnostic("jas latency: \(Output.reason(error))")
            throw ExitCode(2)
        }
        defer { meter.stop() }
        let path = LatencyPathSources(session: meter.session, output: outputPort, input: inputPort)
        if !json {
            Output.line("measuring \(Output.safe(outputPort)) → \(Output.safe(inputPort)) on '\(serverName)': "
                  + "\(Int(meter.session.sampleRate)) Hz, period \(meter.session.ioBufferFrames) frames"
                  + PeriodNote.text(spawned: choice.isPrivate, requested: server != nil ? period : nil))
            Output.line("  behind the ports: \(path.summary)")
            if calibrate && path.isSoftwareLoopback { Output.line("  " + LatencyPathSources.softwareLoopbackNote) }
        }
        let wanted = count ?? (calibrate ? 10 : nil)
        let valid = measure(meter, wanted: wanted)
        if calibrate { try store(valid, serverName: serverName, path: path) }
        if valid.isEmpty { throw ExitCode.failure }
    }

    /// Prints readings until `wanted` valid ones came (forever when nil) or
    /// the run gives up (`LatencyReadingTally`). Returns the valid readings.
    private func measure(_ meter: LatencyMeter, wanted: Int?) -> [LatencyReading] {
        var tally = LatencyReadingTally(wanted: wanted)
        var waiting = false
        while tally.wantsMore {
            guard let reading = meter.nextReading(timeout: 5) else {
                // An interruption says so itself (onNotice), and lasts as long as the interrupter does.
                if meter.interruptedBy != nil { continue }
                if !waiting {
                    Output.diagnostic("jas latency: no audio from server '\(meter.configuration.serverName)' for 5 s; "
                                      + "waiting for it (Ctrl-C to stop)")
                    waiting = true
                }
                if wanted != nil && spawnedServerGone(meter) { break }
                continue
            }
            waiting = false
            tally.count(reading)
            if json {
                Output.jsonLine(reading)
            } else {
                Output.line(Self.describe(reading))
            }
        }
        if let shortfall = tally.shortfall { Output.diagnostic("jas latency: " + shortfall) }
        return tally.valid
    }

    private func spawnedServerGone(_ meter: LatencyMeter) -> Bool { server == nil && meter.session.sampleRate == 0 }

    /// Stores the median excess of the readings that carry one, unless they
    /// disagree: over a frame apart, or measured against different reported
    /// latencies (exit status 1, nothing stored).
    private func store(_ valid: [LatencyReading], serverName: String, path: LatencyPathSources) throws {
        let decision = LatencyCalibrationDecision(readings: valid)
        guard case let .store(median, capture, playback) = decision else {
            Output.diagnostic("jas latency: the calibration was not stored: \(decision)")
            throw ExitCode.failure
        }
        let store = LatencyCalibrationStore()
        let correction: LatencyCorrection
        do {
            correction = try store.addRoundTripExcess(median, server: serverName, playbackPort: outputPort,
                                                      capturePort: inputPort, reportedCapture: capture,
                                                      reportedPlayback: playback)
        } catch {
            let reason = Output.reason(error)
            Output.diagnostic("jas latency: the calibration was not stored: \(reason)")
            throw ExitCode(2)
        }
        if json {
            Output.jsonLine(LatencyCalibrationResult(server: serverName, outputPort: outputPort, inputPort: inputPort,
                                                   sources: path, medianExcessFrames: median, correction: correction,
                                                   path: store.path))
        } else {
            Output.line(String(format: "calibrated: median excess %+.3f frames; correction now capture %+d, playback %+d frames",
                         median, correction.captureFrames, correction.playbackFrames)
                  + " for \(path.summary) (\(store.path))")
        }
    }

    static func describe(_ reading: LatencyReading) -> String {
        let index = String(reading.index).leftPadded(to: 4)
        guard reading.valid, let measured = reading.measuredFrames, let ms = reading.measuredMs else {
            return "\(index)  \(reading.message)"
        }
        let polarity = reading.inverted ? "INVERTED" : "polarity normal"
        guard let reported = reading.reportedFrames, let excess = reading.excessFrames else {
            return String(format: "%@  %10.3f frames  %8.3f ms  JACK reports ?  %@  (%@)", index, measured, ms, polarity,
                          reading.reportedMessage ?? "not known")
        }
        return String(format: "%@  %10.3f frames  %8.3f ms  JACK reports %6d  excess %+9.3f  %@%@",
                      index, measured, ms, reported, excess, polarity,
                      reading.reportedSettled ? "" : "  (not settled in JACK for the session's own ports)")
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
