import ArgumentParser
import JackAudioSession
import Foundation

/// `jas monitor`: activate a session and print every event until interrupted.
struct Monitor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Activate a session with the given category, mode and options and print its events until Ctrl-C."
    )

    @OptionGroup var server: ServerOption

    @OptionGroup var session: SessionOptions

    @Flag(help: "Print one JSON object per event.")
    var json = false

    func run() async throws {
        let (category, mode, options) = session.resolved
        WedgeWatch.awaitServerAfterRestart(server, command: "monitor")
        let audioSession = AudioSession(clientName: "jas-monitor", serverName: server.name)
        do {
            try audioSession.setCategory(category, mode: mode, options: options)
            try audioSession.setActive(true)
        } catch {
            Output.diagnostic("jas monitor: \(Output.reason(error))")
            throw ExitCode(2)
        }
        if !json {
            Output.line("monitoring session on '\(audioSession.serverName)': \(category.rawValue), \(mode.rawValue)"
                  + (options.isEmpty ? "" : ", " + options.names.joined(separator: ", ")) + "; Ctrl-C ends")
        }
        Signals.onInterrupt {
            try? audioSession.setActive(false)
            audioSession.close()
        }
        WedgeWatch.start(command: "monitor")
        for await event in audioSession.events {
            Output.line(json ? EventFormat.json(event) : EventFormat.text(event))
        }
    }
}
