import JackAudioSession
import JackKit
import JackRuntime
import JackTestSupport
import XCTest

/// Test 3: the session's input and output latency are the ranges JACK reports
/// for the ports it connects to, and its own ports add zero downstream.
final class LatencyTests: JackTestCase {
    func testLatencyOfDummyBackendPortsAtTwoPeriods() throws {
        for period in [128, 512] {
            let server = try startServer(period: period)
            let session = AudioSession(clientName: "latency", serverName: server.name, recordConsent: .givenByCaller)
            defer { session.close() }
            try session.setCategory(.playAndRecord, mode: .measurement)
            session.setPreferredInputPortNames(["system:capture_1", "system:capture_2"])
            session.setPreferredOutputPortNames(["system:playback_1", "system:playback_2"])
            try session.setActive(true)
            // The activation ends once JACK holds the ranges of the session's own ports (libjack's propagation
            // sets them here: no calibration is stored for this server).
            XCTAssertTrue(session.reportedLatency.settled, "period \(period)")

            // What JACK itself says about the hardware ports and the session's, read independently (jack_lsp -l).
            let listing = try run(["jack_lsp", "-l"], environment: ["JACK_DEFAULT_SERVER": server.name]).output
            let capture = try XCTUnwrap(reportedRange(in: listing, port: "system:capture_1", mode: "capture"))
            let playback = try XCTUnwrap(reportedRange(in: listing, port: "system:playback_1", mode: "playback"))
            XCTAssertEqual(capture, period)
            XCTAssertEqual(playback, 2 * period)
            XCTAssertEqual(reportedRange(in: listing, port: "latency:in_2", mode: "capture"), capture)
            XCTAssertEqual(reportedRange(in: listing, port: "latency:out_2", mode: "playback"), playback)
            XCTAssertEqual(try session.inputLatencyRange, LatencyRange(min: capture, max: capture))
            XCTAssertEqual(try session.outputLatencyRange, LatencyRange(min: playback, max: playback))
            XCTAssertEqual(session.inputLatency, Double(capture) / 48000, accuracy: 1e-12)
            XCTAssertEqual(session.outputLatency, Double(playback) / 48000, accuracy: 1e-12)
        }
    }

    func testExtraHardwareLatencyIsReportedAndSessionAddsZeroDownstream() throws {
        // jackd2's dummy backend has no -I/-O, so a stand-in device client with
        // physical ports declares extra latency in its own latency callback.
        let server = try startServer(period: 256)
        let device = try StandInDevice(server: server.name, captureLatency: 256 + 37, playbackLatency: 512 + 91)
        defer { device.client.close() }

        let session = AudioSession(clientName: "latency", serverName: server.name, recordConsent: .givenByCaller)
        defer { session.close() }
        try session.setCategory(.playAndRecord, mode: .measurement)
        session.setPreferredInputPortNames(["device:capture_1"])
        session.setPreferredOutputPortNames(["device:playback_1"])
        try session.setPreferredInputNumberOfChannels(1)
        try session.setPreferredOutputNumberOfChannels(1)
        try session.setActive(true)
        XCTAssertEqual(try session.inputLatencyRange, LatencyRange(min: 293, max: 293))
        XCTAssertEqual(try session.outputLatencyRange, LatencyRange(min: 603, max: 603))

        // A client downstream of the session's output sees the device's capture
        // latency plus zero.
        let downstream = try TerminalClient(name: "downstream", server: server.name)
        defer { downstream.client.close() }
        try downstream.client.connect("latency:out_1", to: downstream.input.name)
        downstream.client.recomputeLatencies()
        XCTAssertTrue(waitUntil { downstream.input.latencyRange(.capture) == LatencyRange(min: 293, max: 293) },
                      "downstream capture \(downstream.input.latencyRange(.capture))")

        // A client upstream of the session's input sees the device's playback
        // latency plus zero. (Another client, after the first has gone: its
        // own unconnected ports would otherwise widen the ranges to [0, x],
        // which is what JACK rightly reports for such a graph.)
        downstream.client.close()
        let upstream = try TerminalClient(name: "upstream", server: server.name)
        defer { upstream.client.close() }
        try upstream.client.connect(upstream.output.name, to: "latency:in_1")
        upstream.client.recomputeLatencies()
        XCTAssertTrue(waitUntil { upstream.output.latencyRange(.playback) == LatencyRange(min: 603, max: 603) },
                      "upstream playback \(upstream.output.latencyRange(.playback))")
    }

    /// Reads `port`'s range from `jack_lsp -l` output ("port capture latency = [ 64 64 ] frames").
    private func reportedRange(in listing: String, port: String, mode: String) -> Int? {
        let lines = listing.split(separator: "\n").map(String.init)
        guard let start = lines.firstIndex(of: port) else { return nil }
        for line in lines[(start + 1)...].prefix(2) where line.contains("port \(mode) latency") {
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            return numbers.last
        }
        return nil
    }
}

/// A client with one physical capture and one physical playback port that
/// declares fixed latencies in its latency callback, standing in for an
/// interface whose driver reports extra latency.
final class StandInDevice {
    let client: Client

    init(server: String, captureLatency: Int, playbackLatency: Int) throws {
        client = try Client(name: "device", serverName: server)
        let capture = try client.registerPort("capture_1", flags: [.output, .physical, .terminal])
        let playback = try client.registerPort("playback_1", flags: [.input, .physical, .terminal])
        try client.setLatencyHandler { mode in
            switch mode {
            case .capture: capture.setLatencyRange(LatencyRange(min: captureLatency, max: captureLatency), .capture)
            case .playback: playback.setLatencyRange(LatencyRange(min: playbackLatency, max: playbackLatency), .playback)
            }
        }
        // Without a process callback a client takes no part in latency propagation.
        try client.setProcessor(RealtimeProcessor(client: client, inputs: [playback], outputs: [capture]) { cycle in
            for buffer in cycle.outputs { buffer.update(repeating: 0, count: cycle.frameCount) }
        })
        try client.activate()
    }
}

/// A plain client with one input and one output port and a process callback,
/// so that it takes part in latency propagation.
final class TerminalClient {
    let client: Client
    let input: JackKit.Port
    let output: JackKit.Port

    init(name: String, server: String) throws {
        client = try Client(name: name, serverName: server)
        input = try client.registerPort("in", flags: .input)
        output = try client.registerPort("out", flags: .output)
        try client.setProcessor(RealtimeProcessor(client: client, inputs: [input], outputs: [output]) { cycle in
            for buffer in cycle.outputs { buffer.update(repeating: 0, count: cycle.frameCount) }
        })
        try client.activate()
    }
}
