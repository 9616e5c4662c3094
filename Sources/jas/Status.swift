import ArgumentParser
import Foundation
import JackAudioSession
import JackKit
import JackRuntime

/// `jas status`: what the server runs and every port on it.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a JACK server's sample rate, period and every port with its connections and latency.",
        discussion: "Also lists the multiRoute output streams that sessions on the server publish, with their destinations."
    )

    @OptionGroup var server: ServerOption

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @Flag(help: "Also activate a session with --category/--mode/--option and show what it got.")
    var session = false

    @OptionGroup var sessionOptions: SessionOptions

    func run() throws {
        let client: Client
        do {
            client = try Client.checkedOpen(name: "jas-status", serverName: server.name)
        } catch {
            Output.diagnostic("jas status: \(Output.reason(error))")
            throw ExitCode(2)
        }
        defer { client.close() }
        var report = ServerStatus(client)
        if session {
            let (category, mode, options) = sessionOptions.resolved
            let audioSession = AudioSession(clientName: "jas-status-session", serverName: client.serverName)
            defer { audioSession.close() }
            do {
                try audioSession.setCategory(category, mode: mode, options: options)
                try audioSession.setActive(true)
                report.session = SessionStatus(audioSession)
                try audioSession.setActive(false)
            } catch {
                Output.diagnostic("jas status: \(Output.reason(error))")
                throw ExitCode(2)
            }
        }
        if json {
            Output.jsonLine(report)
            return
        }
        Output.line("server '\(report.server)': \(report.sampleRate) Hz, period \(report.periodFrames) frames "
              + "(\(Output.milliseconds(report.periodFrames, rate: report.sampleRate)))")
        Output.line("  " + report.implementation.summary)
        for limitation in report.implementation.limitations { Output.line("  limitation: \(limitation)") }
        for port in report.ports {
            let flags = [port.direction, port.physical ? "physical" : nil, port.terminal ? "terminal" : nil]
                .compactMap { $0 }.joined(separator: ",")
            Output.line("  \(Output.safe(port.name))  [\(flags)]  capture \(port.captureLatency)  playback \(port.playbackLatency)")
            for connection in port.connections { Output.line("      ↔ \(Output.safe(connection))") }
        }
        if let state = report.session {
            Output.line("session: \(state.category), \(state.mode)\(state.options.isEmpty ? "" : ", " + state.options.joined(separator: ", "))")
            // An input with banks says which is in use: "interface (adat of analogue, adat)".
            let inputs = state.route.inputs.map { input in
                input.uid + (input.selectedDataSource.map { selected in
                    " (\(selected.dataSourceName) of " + (input.dataSources ?? []).map(\.dataSourceName).joined(separator: ", ") + ")"
                } ?? "")
            }
            Output.line("  route       in: \(Output.safe(inputs.joined(separator: ", "))); out: "
                        + Output.safe(state.route.outputs.map(\.uid).joined(separator: ", ")))
            Output.line("  I/O buffer  \(state.ioBufferFrames) frames (preferred \(state.preferredIoBufferDuration) s)")
            Output.line("  channels    in \(state.inputChannels ?? 0), out \(state.outputChannels ?? 0)")
            Output.line("  latency     in \(state.inputLatencyFrames.map { "\($0) frames" } ?? "none"), "
                        + "out \(state.outputLatencyFrames.map { "\($0) frames" } ?? "none")"
                        + (state.latencySettled ? "" : "; " + Output.latencyNotSettled))
            Output.line("  record      \(state.recordPermission)")
        }
        if !report.streams.isEmpty { Output.line("multiRoute streams:") }
        for stream in report.streams {
            Output.line("  \(stream.session): \(stream.name) → \(stream.destination) channels "
                  + stream.channels.map(String.init).joined(separator: ",") + " via " + stream.ports.joined(separator: ", ")
                  + (stream.connected ? "" : "  (destination gone: silent until it returns)"))
        }
    }
}

/// The JSON shape of `jas status --json`.
struct ServerStatus: Encodable {
    struct PortStatus: Encodable {
        let name: String
        let type: String
        let direction: String
        let physical: Bool
        let terminal: Bool
        let connections: [String]
        let captureLatency: [Int]
        let playbackLatency: [Int]
    }

    let server: String
    /// What the server is: implementation, driver, a netjack2 slave's link.
    let implementation: ServerDescription
    let sampleRate: Int
    let periodFrames: Int
    let ports: [PortStatus]
    var session: SessionStatus?
    /// The multiRoute streams the sessions on the server publish.
    let streams: [StreamStatus]

    struct StreamStatus: Encodable {
        let session: String
        let name: String
        let destination: String
        let channels: [Int]
        let ports: [String]
        let connected: Bool
    }

    init(_ client: Client) {
        server = client.serverName
        implementation = ServerDescription(client)
        sampleRate = client.sampleRate
        periodFrames = client.bufferSize
        ports = client.ports(type: nil).map { port in
            let capture = port.latencyRange(.capture)
            let playback = port.latencyRange(.playback)
            return PortStatus(name: port.name, type: port.typeName, direction: port.flags.contains(.input) ? "input" : "output",
                              physical: port.flags.contains(.physical), terminal: port.flags.contains(.terminal),
                              connections: port.connections, captureLatency: [capture.min, capture.max],
                              playbackLatency: [playback.min, playback.max])
        }
        let sessions = SessionDirectory.sessions(in: SessionRegistry(serverName: client.serverName), using: client) ?? []
        streams = sessions.flatMap { session in
            (session.state.streams ?? []).map {
                StreamStatus(session: session.state.client, name: $0.name, destination: $0.destination,
                             channels: $0.channels, ports: $0.ports, connected: $0.connected)
            }
        }
    }
}

/// The session part of `jas status --session --json`.
struct SessionStatus: Encodable {
    let category: String
    let mode: String
    let options: [String]
    let active: Bool
    let route: RouteDescription
    let preferredIoBufferDuration: Double
    let ioBufferDuration: Double
    let ioBufferFrames: Int
    let preferredSampleRate: Double
    let sampleRate: Double
    let preferredInputChannels: Int
    let preferredOutputChannels: Int
    let inputChannels: Int?
    let outputChannels: Int?
    let inputLatencyFrames: Int?
    let outputLatencyFrames: Int?
    /// Whether JACK holds those latencies for the session's own ports (see `ReportedLatency.settled`).
    let latencySettled: Bool
    let recordPermission: String
    let inputSilencedByPermission: Bool

    init(_ session: AudioSession) {
        category = session.category.rawValue
        mode = session.mode.rawValue
        options = session.categoryOptions.names
        active = session.isActive
        route = session.currentRoute
        preferredIoBufferDuration = session.preferredIOBufferDuration
        ioBufferDuration = session.ioBufferDuration
        ioBufferFrames = session.ioBufferFrames
        preferredSampleRate = session.preferredSampleRate
        sampleRate = session.sampleRate
        preferredInputChannels = session.preferredInputNumberOfChannels
        preferredOutputChannels = session.preferredOutputNumberOfChannels
        // Absent (null) where the category has no such direction.
        inputChannels = try? session.checkedInputNumberOfChannels()
        outputChannels = try? session.checkedOutputNumberOfChannels()
        inputLatencyFrames = try? session.inputLatencyRange.max
        outputLatencyFrames = try? session.outputLatencyRange.max
        latencySettled = session.reportedLatency.settled
        recordPermission = session.recordPermission.rawValue
        inputSilencedByPermission = session.isInputSilencedByPermission
    }
}

extension ServerDescription {
    /// One line for `jas status`: "jackd2 (libjack 1.9.21), driver net: netjack2 slave of 10.0.0.2, ...".
    var summary: String {
        var text = implementation + (serverVersion.map { " " + $0 } ?? "") + " (libjack \(libraryVersion))"
            + (pid.map { ", pid \($0)" } ?? "")
        text += driver.map { ", driver \($0)" } ?? ", no system: ports"
        if let netjack {
            text += ": netjack2 slave" + (netjack.name.map { " '\(Output.safe($0))'" } ?? "")
                + " of " + (netjack.master ?? "a master whose address this machine does not show")
                + ", network latency \(netjack.networkLatencyPeriods) periods (\(netjack.mode)), "
                + "\(netjack.roundTripFrames) frames round trip reported"
        }
        return text
    }
}
