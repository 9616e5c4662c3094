import ArgumentParser
import JackAudioSession
import EventSchema
import Foundation
import JackKit
import JackRuntime
import LoopbackHarness
import Measurement

/// `jas selftest`: the measurement-mode loopback check, on a private server
/// or on a running one.
struct Selftest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a seeded signal through a loopback in measurement mode and check it returns bit-identical.",
        discussion: """
            Without --server, starts a private headless jackd (dummy backend, loopback ports), runs the \
            check and stops that server again. With --server, uses the running server and its loopback: \
            ports, or the ports given with --out and --in (a loopback cable on real hardware).
            Exit status 0 only when the path was bit-exact and the delay was the expected one.
            With --loop (and --server) it checks again and again until Ctrl-C, one line per round; when \
            the server goes away it says so, waits for it (never starting one) and goes on when it is \
            back; the exit status is 0 when every round that ran on a present server passed.
            """
    )

    @Option(help: "Use this running JACK server instead of starting a private one.")
    var server: String?

    @Option(help: ArgumentHelp("Period in frames: the private server's -p (default 256), or a request to a running server.",
                               discussion: "Without it a running server keeps its period; with it every client on that server gets the new one."))
    var period: Int?

    @Option(help: "Seconds of signal to send.")
    var duration: Double = 5

    @Option(name: .customLong("out"), help: "Port the signal is sent to (repeat per channel).")
    var outputPorts: [String] = []

    @Option(name: .customLong("in"), help: "Port the signal comes back on (repeat per channel).")
    var inputPorts: [String] = []

    @Option(help: ArgumentHelp("Runs at most, when xruns or dropouts disturb one.",
                               discussion: "A disturbed run says nothing of the path; the last run is the one reported."))
    var attempts: Int = 3

    @Flag(help: "Check again and again until Ctrl-C, through server restarts (needs --server).")
    var loop = false

    @Flag(help: "Print one JSON object instead of text (with --loop: one per round and per event).")
    var json = false

    func validate() throws {
        try OptionCheck.period(period)
        try OptionCheck.seconds(duration, "--duration", maximum: 3600)
        guard (1...100).contains(attempts) else { throw ValidationError("--attempts must be 1…100, got \(attempts)") }
        guard outputPorts.count == inputPorts.count else {
            throw ValidationError("give as many --out as --in ports (got \(outputPorts.count) and \(inputPorts.count))")
        }
        if server == nil && !outputPorts.isEmpty {
            throw ValidationError("--out/--in name ports of a running server: add --server NAME")
        }
        if loop && server == nil {
            throw ValidationError("--loop checks a running server through its restarts: add --server NAME")
        }
    }

    func run() throws {
        let choice = try ServerChoice(server: server, command: "selftest", period: period ?? 256, quiet: json)
        let serverName = choice.name
        var check = LoopbackCheck(serverName: serverName)
        if !outputPorts.isEmpty {
            check.outputPorts = outputPorts
            check.inputPorts = inputPorts
        }
        check.duration = duration
        check.maximumAttempts = attempts
        // A running server keeps its period unless --period asks for another.
        let requested = server != nil ? period : nil
        check.preferredPeriodFrames = requested
        if loop {
            try runLoop(check)
            return
        }
        if !json { Output.line("sending \(duration) s of a seeded signal on \(check.outputPorts.count) channels…") }
        let result: LoopbackCheck.Result
        do {
            result = try check.run()
        } catch {
            Output.diagnostic("jas selftest: \(Output.reason(error))" + (outputPorts.isEmpty ? Self.defaultPathAdvice(error) : ""))
            throw ExitCode(2)
        }
        if json {
            Output.jsonLine(SelftestReport(result, serverSpawned: choice.isPrivate, periodRequested: requested))
        } else {
            printHuman(result, spawned: choice.isPrivate, periodRequested: requested)
        }
        if !result.passed { throw ExitCode.failure }
    }

    /// Where the default path (the first two `-L` loopback pairs) is missing: how to name another.
    static func defaultPathAdvice(_ error: any Error) -> String {
        let cause = (error as? AudioSessionError)?.cause ?? error as? JackError
        guard case .portNotFound? = cause else { return "" }
        return "; without --out/--in the check uses the server's first two -L loopback pairs: name the path with "
            + "--out PORT --in PORT, once per channel (e.g. --out loopback:playback_1 --in loopback:capture_1 on a "
            + "server started with -L 1)"
    }

    /// `--loop`: rounds until Ctrl-C (`LoopbackRounds`), one line per
    /// round and per absence of the server.
    private func runLoop(_ configuration: LoopbackCheck) throws {
        var check = configuration
        let json = json
        check.onMediaServicesEvent = { event in
            if json {
                Output.line(EventFormat.json(event))
            } else {
                Output.diagnostic("jas selftest: " + EventFormat.text(event))
            }
        }
        let rounds = LoopbackRounds(check: check)
        // Ctrl-C may land in the middle of a round, with the round's JACK
        // client open: exit() would run libjack's global destructors under it
        // (seen to hang), so the process leaves at once, as a killed client
        // does; jackd drops the client.
        // Not fflush(nil) first: every line is flushed as it is written, and
        // fflush waits for a stream another thread may be writing to.
        Signals.onInterrupt {
            _exit(rounds.failures == 0 ? 0 : 1)
        }
        WedgeWatch.start(command: "selftest")
        let server = check.serverName
        if !json { Output.line("checking '\(server)' every round of \(duration) s until Ctrl-C…") }
        try rounds.run { event in
            switch event {
            case let .round(number, result) where json:
                Output.jsonLine(SelftestRound(round: number, report: SelftestReport(result, serverSpawned: false)))
            case let .round(number, result):
                let delay = result.measuredRoundtripFrames.map { "\($0)" } ?? "none"
                Output.line("round \(number): \(result.passed ? "PASS" : "FAIL") bit-exact \(result.bitExact ? "yes" : "NO"), "
                            + "delay \(delay) of \(result.expectedRoundtripFrames.map(String.init) ?? "unknown") frames, "
                            + "\(result.xruns) xruns, \(result.dropouts) dropouts, \(result.attempts) run(s)")
            case let .serverAway(error) where json:
                Output.line(EventEncoding.line(ServerAvailability(event: "serverUnreachable", server: server,
                                                                  reason: Output.reason(error)), at: Date()))
            case let .serverAway(error):
                Output.diagnostic("jas selftest: server '\(server)' is not there (\(Output.reason(error))); waiting for it")
            case let .serverBack(downtime) where json:
                Output.jsonEvent(ServerAvailability(event: "serverBack", server: server, downtimeSeconds: downtime))
            case let .serverBack(downtime):
                Output.diagnostic("jas selftest: server '\(server)' is back after " + String(format: "%.2f", downtime)
                                  + " s; checking again")
            }
        }
    }

    private func printHuman(_ result: LoopbackCheck.Result, spawned: Bool, periodRequested: Int?) {
        let rate = result.sampleRate
        let origin = spawned ? "private server" : "server"
        Output.line("\(origin) '\(result.serverName)': \(rate) Hz, period \(result.periodFrames) frames (\(Output.milliseconds(result.periodFrames, rate: rate)))"
              + PeriodNote.text(spawned: spawned, requested: periodRequested))
        for (output, input) in zip(result.outputPorts, result.inputPorts) {
            Output.line("  path        session out → \(output) … \(input) → session in")
        }
        Output.line("  latency     input \(result.inputLatencyFrames) frames (\(Output.milliseconds(result.inputLatencyFrames, rate: rate))), "
              + "output \(result.outputLatencyFrames) frames (\(Output.milliseconds(result.outputLatencyFrames, rate: rate))), as JACK reports"
              + (result.latencySettled ? "" : "; " + Output.latencyNotSettled))
        let measured = result.measuredRoundtripFrames.map { "\($0) frames" } ?? "signal not found"
        if let expected = result.expectedRoundtripFrames {
            Output.line("  round trip  \(measured) measured, \(expected) frames expected")
        } else {
            Output.line("  round trip  \(measured) measured; none expected: the server reports 0 latency for this path "
                        + "(PipeWire's null devices do), so only bit-exactness is judged; "
                        + "`jas latency --calibrate` with these ports stores the measured delay, and later checks expect it")
        }
        let identical = result.samplesCompared - result.mismatches - result.lateSamples
        Output.line("  bit-exact   \(result.bitExact ? "yes" : "NO"): \(identical) of \(result.samplesCompared) samples identical"
                    + (result.lateSamples > 0 ? ", \(result.lateSamples) one period off in late cycles (xruns)" : ""))
        if result.dropouts > 0 {
            Output.line("  dropouts    \(result.dropouts) period(s) came back as silence with no xrun reported: the server "
                        + "dropped them (PipeWire does in a loop through a null sink's monitor)")
        }
        if result.xruns > 0 || result.attempts > 1 {
            Output.line("  xruns       \(result.xruns) in the last run; \(result.attempts) run(s)")
        }
        Output.line(result.passed ? "PASS: the measurement path is bit-exact" : "FAIL: the measurement path is not bit-exact or the delay is wrong")
    }
}

/// The JSON shape of `jas selftest --json`: the check's result, whether the
/// server was spawned, and whether it passed.
struct SelftestReport: Encodable {
    let result: LoopbackCheck.Result
    let serverSpawned: Bool
    /// The period asked of a running server with --period (nil: it kept its own).
    let periodRequested: Int?

    init(_ result: LoopbackCheck.Result, serverSpawned: Bool, periodRequested: Int? = nil) {
        self.result = result
        self.serverSpawned = serverSpawned
        self.periodRequested = periodRequested
    }

    private enum Keys: String, CodingKey { case serverSpawned, passed, periodRequested }

    func encode(to encoder: any Encoder) throws {
        try result.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(serverSpawned, forKey: .serverSpawned)
        try container.encode(result.passed, forKey: .passed)
        try container.encode(periodRequested, forKey: .periodRequested)
    }
}

/// One line of `jas selftest --loop --json`: the round's number and report.
struct SelftestRound: Encodable {
    let round: Int
    let report: SelftestReport

    private enum Keys: String, CodingKey { case round, event }

    func encode(to encoder: any Encoder) throws {
        try report.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(round, forKey: .round)
        try container.encode("round", forKey: .event)
    }
}

/// `jas selftest --repeat`'s word that its server went away, or came back after `downtimeSeconds`.
struct ServerAvailability: Encodable {
    let event: String
    let server: String
    var reason: String?
    var downtimeSeconds: Double?
}
