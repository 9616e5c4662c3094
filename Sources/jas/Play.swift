import ArgumentParser
import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import Measurement

/// `jas play`: a player session that follows the seeds' guidelines for
/// playback apps: it pauses when interrupted and resumes when the
/// interruption ends with `.shouldResume`.
struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a test signal in a session and follow interruptions, ducking and route changes.",
        discussion: """
            Prints the session's events (--json: one object per line). On interruption began the player \
            pauses; on ended with shouldResume it reactivates and plays again; on ended without it stays \
            paused, as the seeds ask of playback apps. When the output device is unplugged it pauses too \
            (SIGUSR1 resumes). With --for it stops after that many seconds.

            --route NAME=DEST (repeatable) plays under multiRoute: one stream per route, each to its own \
            destination, each with its own signal (sine: --frequency times the route's number; noise: \
            its own seed). DEST is a device uid (`headphones`), a device and its channels \
            (`headphones:1` or `hdmi:1,2`), or JACK ports of one device (`system:playback_3,system:playback_4`). \
            A stream whose device goes away is silent until it returns; nothing moves to another device.
            """
    )

    @OptionGroup var server: ServerOption

    @OptionGroup var session: SessionOptions

    @Option(help: "What to play: sine, noise or sweep.")
    var signal: String = "sine"

    @Option(help: "Sine frequency, Hz.")
    var frequency: Double = 1000

    @Option(parsing: .unconditional, help: "Peak level, dBFS, e.g. -20.")
    var level: Double = -20

    @Flag(help: "Mix with others (the mixWithOthers option).")
    var mix = false

    @Flag(help: "Duck others while playing (the duckOthers option).")
    var duck = false

    @Option(parsing: .unconditional, help: "How far this session ducks the others, dB, e.g. -10.")
    var duckLevel: Double = -20

    @Option(help: "Seconds of silence after which ducking ends while still active (default: ducking lasts until the player stops).")
    var duckHold: Double?

    @Option(name: .customLong("port"), help: "Output port to play into (repeatable; default: the route).")
    var ports: [String] = []

    @Option(name: .customLong("route"), help: ArgumentHelp("A multiRoute stream NAME=DEST (repeatable; see below).",
                                                           valueName: "NAME=DEST"))
    var routes: [String] = []

    @Option(name: .customLong("for"), help: "Stop after this many seconds (default: until Ctrl-C).")
    var seconds: Double?

    @Flag(help: "On stopping, deactivate with notifyOthersOnDeactivation.")
    var notify = false

    @Option(help: "The JACK client name.")
    var name = "jas-play"

    @Option(help: .hidden)
    var startAt: Double?

    @Flag(help: "Print one JSON object per event.")
    var json = false

    func validate() throws {
        guard ["sine", "noise", "sweep"].contains(signal) else {
            throw ValidationError("--signal must be sine, noise or sweep (playing files needs the Recording module's "
                                  + "file reading, not there yet)")
        }
        try OptionCheck.number(frequency, "--frequency", in: 0.001...96_000, unit: "Hz")
        try OptionCheck.number(level, "--level", in: -200...0, unit: "dBFS")
        try OptionCheck.number(duckLevel, "--duck-level", in: -96...0, unit: "dB")
        try OptionCheck.seconds(duckHold, "--duck-hold", allowZero: true, maximum: 3600)
        try OptionCheck.seconds(seconds, "--for")
        let parsed = try routes.map(StreamRoute.init(parsing:))
        guard Set(parsed.map(\.name)).count == parsed.count else { throw ValidationError("each --route needs its own NAME") }
        guard routes.isEmpty || ports.isEmpty else { throw ValidationError("give either --route or --port, not both") }
        if !routes.isEmpty, ![.playback, .multiRoute].contains(session.category) {
            throw ValidationError("--route plays under category multiRoute, not \(session.category.rawValue)")
        }
    }

    /// Waits until the wall clock reads `time` (seconds since 1970), looking
    /// at it again at least every half second, so that a clock stepped
    /// meanwhile is followed, and a time far ahead is no single long sleep.
    static func sleep(untilWallTime time: Double) {
        while case let left = time - Date().timeIntervalSince1970, left > 0 {
            usleep(UInt32(min(left, 0.5) * 1_000_000))
        }
    }

    func run() async throws {
        var (category, mode, options) = session.resolved
        if !routes.isEmpty { category = .multiRoute }
        if mix { options.insert(.mixWithOthers) }
        if duck { options.insert(.duckOthers) }
        let audioSession = AudioSession(clientName: name, serverName: server.name)
        // Before anything starts, so a Ctrl-C during start-up is not lost.
        let deactivation: SetActiveOptions = notify ? .notifyOthersOnDeactivation : []
        Signals.onInterrupt {
            try? audioSession.setActive(false, options: deactivation)
            audioSession.close()
        }
        WedgeWatch.start(command: "play")
        let player: StreamSignals
        do {
            let rate = try Client.checkedOpen(name: "\(name)-probe", serverName: audioSession.serverName).sampleRate
            // Route n plays n × the frequency: the highest must stay below half the rate.
            let highest = frequency * Double(max(1, routes.count))
            if signal == "sine", highest >= Double(rate) / 2 {
                Output.diagnostic("jas play: --frequency \(frequency) Hz" + (routes.count > 1 ? " × \(routes.count) routes = "
                                  + "\(highest) Hz" : "") + " is not below half of server '\(audioSession.serverName)''s "
                                  + "sample rate (\(rate / 2) Hz); choose a lower frequency")
                throw ExitCode(2)
            }
            func generator(_ number: Int) -> SignalGenerator {
                let shape: SignalGenerator.Shape = switch signal {
                case "noise": .noise
                case "sweep": .sweep(seconds: 10)
                default: .sine(frequency: frequency * Double(number))
                }
                return SignalGenerator(shape: shape, levelDBFS: level, sampleRate: Double(rate), seed: UInt64(number))
            }
            try audioSession.setCategory(category, mode: mode, options: options)
            if routes.isEmpty {
                player = StreamSignals(allOutputs: generator(1))
            } else {
                let streams = try routes.map { text in
                    try StreamRoute(parsing: text).makeStream(in: audioSession)
                }
                player = StreamSignals(streams.enumerated().map { (generator($0.offset + 1), $0.element) })
            }
            try audioSession.setDuckLevel(duckLevel)
            try audioSession.setDuckReleaseHold(duckHold)
            if !ports.isEmpty {
                audioSession.setPreferredOutputPortNames(ports)
                try audioSession.setPreferredOutputNumberOfChannels(ports.count)
            }
            audioSession.setRenderBlock(player.renderBlock)
            // For race tests: several players activate at one instant of the wall clock.
            if let startAt { Self.sleep(untilWallTime: startAt) }
            try audioSession.setActive(true)
        } catch {
            Output.diagnostic("jas play: \(Output.reason(error))")
            throw ExitCode(2)
        }
        if !json {
            Output.line("playing \(signal) at \(level) dBFS in '\(name)' on '\(audioSession.serverName)': \(category.rawValue), "
                  + "\(mode.rawValue)" + (options.isEmpty ? "" : ", " + options.names.joined(separator: ", ")))
            for (stream, generator) in zip(audioSession.outputStreams, player.generators) {
                let ports = stream.portNames.map { "\(name):\($0)" }.joined(separator: ", ")
                Output.line("  stream \(stream.name) → \(stream.destination) channels \(stream.channels.map(String.init).joined(separator: ","))"
                      + " (\(ports))" + (signal == "sine" ? String(format: ", %.0f Hz", generator.frequencyHz) : ""))
            }
        }
        Signals.onUser1 {
            player.setPaused(false)
            if !json { Output.line("  resumed") }
        }
        if let seconds {
            Task.detached {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                WedgeWatch.claimEnding()
                try? audioSession.setActive(false, options: deactivation)
                audioSession.close()
                WedgeWatch.leaveIfWedged(command: "play")
                Foundation.exit(0)
            }
        }
        let policy = PlaybackPolicy(category: category)
        for await event in audioSession.events {
            Output.line(json ? EventFormat.json(event) : EventFormat.text(event))
            switch policy.follow(event, session: audioSession, player: player) {
            case .paused?:
                if !json { Output.line("  paused") }
            case .resumed?:
                if !json { Output.line("  resumed") }
            case let .resumeFailed(error)?:
                Output.diagnostic("jas play: could not resume: \(Output.reason(error))")
            case .stayedPaused?:
                if !json { Output.line("  interruption ended without shouldResume: staying paused") }
            case .pausedForDeviceLoss?:
                if !json { Output.line("  paused: the output device went away (SIGUSR1 resumes)") }
            case nil:
                break
            }
        }
    }
}
