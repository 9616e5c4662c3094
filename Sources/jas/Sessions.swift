import ArgumentParser
import JackAudioSession
import Foundation
import JackKit
import JackRuntime

/// `jas sessions`: every session on the server with its published state.
struct Sessions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the audio sessions on a JACK server with the state each publishes."
    )

    @OptionGroup var server: ServerOption

    @Flag(help: "One JSON object per session.")
    var json = false

    func run() throws {
        let serverName = server.resolvedName
        let registry = SessionRegistry(serverName: serverName)
        // The registry alone says which sessions live (a dead one's lock is
        // gone); jackd is not asked, so this works while it restarts too.
        guard let published = SessionDirectory.sessions(in: registry, using: nil, refused: { file, refusal in
            Output.diagnostic("jas sessions: ignoring \(registry.directory)/\(file): \(refusal)")
        }) else {
            Output.diagnostic("jas sessions: cannot read the session registry \(registry.directory): "
                              + "\(String(cString: strerror(errno)))")
            throw ExitCode(2)
        }
        if published.isEmpty && ServerProcess.serving(serverName: serverName) == nil {
            // Nothing published and no jackd by that name: a typo must not
            // look like an idle server. PipeWire has no jackd: only there is
            // a client opened to ask (libjack's open touches jackd2's
            // metadata store, whose complaints would land in the output).
            do {
                guard LibraryVersion.isPipeWire else { throw JackError.serverNotRunning(server: serverName, status: 0) }
                let client = try Client.checkedOpen(name: "jas-sessions", serverName: serverName)
                client.close()
            } catch {
                Output.diagnostic("jas sessions: \(Output.reason(error))")
                throw ExitCode(2)
            }
        }
        let sessions = published.sorted { Arbitration.precedes($0, $1) }
        for session in sessions {
            let state = session.state
            if json {
                Output.jsonLine(SessionLine(state))
            } else {
                var flags: [String] = [state.active ? "active" : "inactive"]
                if state.interrupted { flags.append("interrupted by \(state.interruptedBy ?? "?")") }
                if state.ducking { flags.append("ducking others \(state.duckLevelDB) dB") }
                if state.ducked { flags.append("ducked") }
                if state.producingSound { flags.append("sounding") }
                Output.line("\(Output.safe(state.client)) (pid \(state.pid)): \(state.priority.rawValue), \(state.category.rawValue), "
                      + "\(state.mode.rawValue)" + (state.options.isEmpty ? "" : " [\(state.options.joined(separator: ", "))]")
                      + "; " + flags.joined(separator: ", "))
            }
        }
        if sessions.isEmpty && !json { Output.line("no sessions on '\(serverName)'") }
    }
}

/// One line of `jas sessions --json`.
struct SessionLine: Encodable {
    let client: String
    let pid: Int32
    let category: String
    let mode: String
    let options: [String]
    let active: Bool
    let priority: String
    let interrupted: Bool
    let interruptedBy: String?
    let ducked: Bool
    let ducking: Bool
    let producingSound: Bool

    init(_ state: SessionState) {
        client = state.client
        pid = state.pid
        category = state.category.rawValue
        mode = state.mode.rawValue
        options = state.options
        active = state.active
        priority = state.priority.rawValue
        interrupted = state.interrupted
        interruptedBy = state.interruptedBy
        ducked = state.ducked
        ducking = state.ducking
        producingSound = state.producingSound
    }
}
