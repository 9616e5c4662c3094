import ArgumentParser
import Foundation
import JackKit

/// `jas status`: what the server runs and every port on it.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a JACK server's sample rate, period and every port with its connections and latency."
    )

    @Option(help: "The JACK server (default: $JACK_DEFAULT_SERVER or 'default').")
    var server: String?

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func run() throws {
        let client: Client
        do {
            client = try Client(name: "jas-status", serverName: server)
        } catch {
            Output.diagnostic("jas status: \(error)")
            throw ExitCode(2)
        }
        defer { client.close() }
        let report = ServerStatus(client)
        if json {
            Output.jsonLine(report)
            return
        }
        print("server '\(report.server)': \(report.sampleRate) Hz, period \(report.periodFrames) frames "
              + "(\(Output.milliseconds(report.periodFrames, rate: report.sampleRate)))")
        for port in report.ports {
            let flags = [port.direction, port.physical ? "physical" : nil, port.terminal ? "terminal" : nil]
                .compactMap { $0 }.joined(separator: ",")
            print("  \(port.name)  [\(flags)]  capture \(port.captureLatency)  playback \(port.playbackLatency)")
            for connection in port.connections { print("      ↔ \(connection)") }
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
    let sampleRate: Int
    let periodFrames: Int
    let ports: [PortStatus]

    init(_ client: Client) {
        server = client.serverName
        sampleRate = client.sampleRate
        periodFrames = client.bufferSize
        ports = client.portNames(type: nil).compactMap { name in
            guard let port = client.port(named: name) else { return nil }
            let capture = port.latencyRange(.capture)
            let playback = port.latencyRange(.playback)
            return PortStatus(name: name, type: port.typeName, direction: port.flags.contains(.input) ? "input" : "output",
                              physical: port.flags.contains(.physical), terminal: port.flags.contains(.terminal),
                              connections: port.connections, captureLatency: [capture.min, capture.max],
                              playbackLatency: [playback.min, playback.max])
        }
    }
}
