import JackAudioSession

/// What lies behind the two ports of a measured path: the driver or client
/// that makes each one (`ServerDescription.source(ofPort:on:)`), so that a
/// person calibrating knows whether it is a sound card or jackd itself.
public struct LatencyPathSources: Sendable, Equatable, Encodable {
    /// Behind the port the signal is sent to ("alsa", "dummy", "loopback", "client 'x'"; nil: not found).
    public let output: String?
    /// Behind the port it comes back on.
    public let input: String?

    /// Reads them through the session's client (both nil when it has none).
    public init(session: AudioSession, output: String, input: String) {
        let client = session.client
        self.output = client.flatMap { ServerDescription.source(ofPort: output, on: $0) }
        self.input = client.flatMap { ServerDescription.source(ofPort: input, on: $0) }
    }

    /// Whether both ends are jackd's own software (the dummy driver, the `-L` loopback).
    public var isSoftwareLoopback: Bool {
        [output, input].allSatisfy { $0.map(ServerDescription.isSoftwareLoopback) ?? false }
    }

    /// "the dummy driver" or "out: the alsa driver, in: client 'x'".
    public var summary: String {
        func name(_ source: String?) -> String {
            switch source {
            case nil: "unknown"
            case "loopback"?: "jackd's -L loopback"
            case let source? where source.hasPrefix("client "): source
            case let source?: "the \(source) driver"
            }
        }
        return output == input ? name(output) : "out: \(name(output)), in: \(name(input))"
    }

    /// What calibrating a software loopback means, for a person.
    public static let softwareLoopbackNote = "this path is jackd's own software loopback, no sound card: it returns "
        + "the signal one period later while JACK reports capture + playback latency, so the correction stored is "
        + "that difference (about -2 periods), true for this server's ports only, and says nothing about hardware"
}

/// What `jas latency --calibrate --json` prints once it has stored a correction.
public struct LatencyCalibrationResult: Sendable, Encodable {
    /// The JSON line's event: `calibrated`.
    public let event = "calibrated"
    /// The server measured on.
    public let server: String
    /// The path's output port.
    public let outputPort: String
    /// The path's input port.
    public let inputPort: String
    /// What JACK's latency ranges say each side is made of.
    public let sources: LatencyPathSources
    /// The median of the readings' excess over what JACK reports, frames.
    public let medianExcessFrames: Double
    /// The correction stored.
    public let correction: LatencyCorrection
    /// The file the correction is kept in.
    public let path: String

    /// A calibration result, as `jas latency --calibrate` prints it.
    public init(server: String, outputPort: String, inputPort: String, sources: LatencyPathSources,
                medianExcessFrames: Double, correction: LatencyCorrection, path: String) {
        self.server = server
        self.outputPort = outputPort
        self.inputPort = inputPort
        self.sources = sources
        self.medianExcessFrames = medianExcessFrames
        self.correction = correction
        self.path = path
    }
}
