import ArgumentParser
import JackAudioSession
import Foundation
import JackKit
import JackRuntime

/// `jas interrupt`: a session that interrupts the others for a while and
/// then lets them resume — the "invoke an interruption" of the seeds.
struct Interrupt: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Interrupt the other sessions on the server for a while, then let them resume.",
        discussion: """
            --as call activates a call-class session (playAndRecord, voiceChat): it interrupts every other \
            session, mixable or not, and nothing can activate over it. --as ordinary activates a non-mixable \
            playback session, which interrupts the non-mixable ones. After --for seconds it deactivates with \
            notifyOthersOnDeactivation, so the interrupted sessions receive ended with shouldResume.
            """
    )

    @OptionGroup var server: ServerOption

    @Option(name: .customLong("as"), help: ArgumentHelp("The priority class the interrupting session takes.", valueName: "priority"))
    var priority: AudioSession.Priority = .call

    @Option(name: .customLong("for"), help: "Seconds the interruption lasts.")
    var seconds: Double = 5

    @Option(help: "The JACK client name.")
    var name = "jas-interrupt"

    @Flag(help: "Print JSON Lines.")
    var json = false

    func validate() throws {
        try OptionCheck.seconds(seconds, "--for", allowZero: true, maximum: 86_400)
    }

    func run() async throws {
        // The caller asked for a call: its microphone side carries nothing of anyone's.
        let session = AudioSession(clientName: name, serverName: server.name, recordConsent: .givenByCaller)
        do {
            if priority == .call {
                try session.setCategory(.playAndRecord, mode: .voiceChat)
            } else {
                try session.setCategory(.playback)
            }
            session.setPriority(priority)
            if json {
                // The instant the activation was asked for, on JACK's clock
                // (shared by every process): how long the others take to
                // yield is measured from here.
                Output.jsonLine(InterruptReport(event: "activating", client: name, priority: priority.rawValue,
                                                interrupted: [], time: Client.microsecondTime))
            }
            try session.setActive(true)
        } catch {
            Output.diagnostic("jas interrupt: \(Output.reason(error))")
            throw ExitCode(2)
        }
        Signals.onInterrupt {
            try? session.setActive(false, options: .notifyOthersOnDeactivation)
            session.close()
        }
        // Until every session this one interrupts has stepped down (at most 1 s).
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(1) {
            let all = session.publishedSessions()
            guard let me = all.first(where: { $0.state.client == name }),
                  all.contains(where: { Arbitration.interrupts(me, $0) }) else { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        let interrupted = session.publishedSessions().filter { $0.state.interruptedBy == name }.map(\.state.client)
        if json {
            Output.jsonLine(InterruptReport(event: "began", client: name, priority: priority.rawValue, interrupted: interrupted))
        } else {
            Output.line("\(priority.rawValue) '\(name)' active on '\(session.serverName)' for \(seconds) s; interrupted: "
                  + (interrupted.isEmpty ? "none" : interrupted.joined(separator: ", ")))
        }
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds - (ContinuousClock.now - started).inSeconds) * 1e9))
        try? session.setActive(false, options: .notifyOthersOnDeactivation)
        session.close()
        if json {
            Output.jsonLine(InterruptReport(event: "ended", client: name, priority: priority.rawValue, interrupted: interrupted))
        } else {
            Output.line("ended; the interrupted sessions were told they may resume")
        }
    }
}

struct InterruptReport: Encodable {
    let event: String
    let client: String
    let priority: String
    let interrupted: [String]
    /// JACK microseconds (the activating event only).
    var time: UInt64?
}
