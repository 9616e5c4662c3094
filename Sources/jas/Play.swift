import ArgumentParser
import AudioSession
import Foundation
import JackKit
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
            paused, as the seeds ask of playback apps. With --for it stops after that many seconds.
            """
    )

    @Option(help: "The JACK server (default: $JACK_DEFAULT_SERVER or 'default').")
    var server: String?

    @OptionGroup var session: SessionOptions

    @Option(help: "What to play: sine, noise or sweep.")
    var signal: String = "sine"

    @Option(help: "Sine frequency, Hz.")
    var frequency: Double = 1000

    @Option(help: "Peak level, dBFS.")
    var level: Double = -20

    @Flag(help: "Mix with others (the mixWithOthers option).")
    var mix = false

    @Flag(help: "Duck others while playing (the duckOthers option).")
    var duck = false

    @Option(help: "How far this session ducks the others, dB.")
    var duckLevel: Double = -20

    @Option(help: "Seconds of silence after which ducking ends while still active.")
    var duckHold: Double = 2

    @Option(name: .customLong("port"), help: "Output port to play into (repeatable; default: the route).")
    var ports: [String] = []

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
        guard frequency > 0, level <= 0 else { throw ValidationError("--frequency must be > 0 Hz and --level ≤ 0 dBFS") }
    }

    func run() async throws {
        var (category, mode, options) = try session.resolved()
        if mix { options.insert(.mixWithOthers) }
        if duck { options.insert(.duckOthers) }
        let audioSession = AudioSession(clientName: name, serverName: server)
        // Before anything starts, so a Ctrl-C during start-up is not lost.
        let deactivation: SetActiveOptions = notify ? .notifyOthersOnDeactivation : []
        Signals.onInterrupt {
            try? audioSession.setActive(false, options: deactivation)
            audioSession.close()
        }
        let generator: SignalGenerator
        do {
            let rate = try Client(name: "\(name)-probe", serverName: audioSession.serverName).sampleRate
            let shape: SignalGenerator.Shape = switch signal {
            case "noise": .noise
            case "sweep": .sweep(seconds: 10)
            default: .sine(frequency: frequency)
            }
            generator = SignalGenerator(shape: shape, levelDBFS: level, sampleRate: Double(rate))
            try audioSession.setCategory(category, mode: mode, options: options)
            try audioSession.setDuckLevel(duckLevel)
            try audioSession.setDuckReleaseHold(duckHold)
            if !ports.isEmpty {
                audioSession.setPreferredOutputPortNames(ports)
                try audioSession.setPreferredOutputNumberOfChannels(ports.count)
            }
            audioSession.setRenderBlock(generator.renderBlock)
            // For race tests: several players activate at one instant of the wall clock.
            if let startAt { usleep(UInt32(max(0, startAt - Date().timeIntervalSince1970) * 1_000_000)) }
            try audioSession.setActive(true)
        } catch {
            Output.diagnostic("jas play: \(error)")
            throw ExitCode(2)
        }
        if !json {
            print("playing \(signal) at \(level) dBFS in '\(name)' on '\(audioSession.serverName)': \(category.rawValue), "
                  + "\(mode.rawValue)" + (options.isEmpty ? "" : ", " + options.names.joined(separator: ", ")))
        }
        if let seconds {
            Task.detached {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                try? audioSession.setActive(false, options: deactivation)
                audioSession.close()
                Foundation.exit(0)
            }
        }
        for await event in audioSession.events {
            print(json ? EventFormat.json(event) : EventFormat.text(event))
            switch event {
            case .interruption(type: .began, _, _):
                generator.setPaused(true)
                if !json { print("  paused") }
            case let .interruption(type: .ended, options, _):
                if options.contains(.shouldResume) {
                    do {
                        try audioSession.setActive(true)
                        generator.setPaused(false)
                        if !json { print("  resumed") }
                    } catch {
                        Output.diagnostic("jas play: could not resume: \(error)")
                    }
                } else if !json {
                    print("  interruption ended without shouldResume: staying paused")
                }
            default:
                break
            }
            fflush(nil)
        }
    }
}
