import JackAudioSession
import Foundation
import JackKit
import JackRuntime

/// The measurement-mode loopback check: a playAndRecord session in
/// measurement mode sends a seeded signal out through a loopback and checks
/// that it comes back bit-identical, after exactly the expected delay.
public struct LoopbackCheck: Sendable {
    /// The server to use.
    public var serverName: String
    /// Ports the session's outputs connect to, one per channel.
    public var outputPorts: [String]
    /// Ports the session's inputs connect to, one per channel.
    public var inputPorts: [String]
    /// How long to send, seconds.
    public var duration: Double = 10
    /// The signal's seed.
    public var seed: UInt64 = 0x4A41_5321
    /// A period to request, frames (nil: keep the server's). Turned into a
    /// preferred I/O buffer duration at the server's own sample rate.
    public var preferredPeriodFrames: Int?
    /// Runs to try when an xrun or a dropout disturbed a run (the comparison itself never loosens).
    public var maximumAttempts = 3
    /// The JACK client name.
    public var clientName = "jas-selftest"
    /// Called with the session's media-services events (the server went away
    /// mid-run, the session rebuilt itself), on another thread.
    public var onMediaServicesEvent: (@Sendable (AudioSessionEvent) -> Void)?

    /// A check on `serverName` through these ports; by default the server's
    /// first two `-L` loopback pairs.
    public init(serverName: String, outputPorts: [String] = ["loopback:playback_1", "loopback:playback_2"],
                inputPorts: [String] = ["loopback:capture_1", "loopback:capture_2"]) {
        self.serverName = serverName
        self.outputPorts = outputPorts
        self.inputPorts = inputPorts
    }

    /// What one check found.
    public struct Result: Sendable, Codable, Equatable {
        /// The server checked.
        public var serverName: String
        /// The server's sample rate, Hz.
        public var sampleRate: Int
        /// The server's period, frames.
        public var periodFrames: Int
        /// Channels compared.
        public var channels: Int
        /// The capture latency JACK reported for the inputs, frames.
        public var inputLatencyFrames: Int
        /// The playback latency JACK reported for the outputs, frames.
        public var outputLatencyFrames: Int
        /// Whether JACK held those latencies for the session's own ports too
        /// (see `ReportedLatency.settled`; never on a path through jackd's
        /// `-L` loopback that jackd ran no latency callback for).
        public var latencySettled: Bool
        /// The delay the signal came back after, frames (nil: it never did).
        public var measuredRoundtripFrames: Int?
        /// The delay the ports' latency ranges (with any stored calibration)
        /// say; nil when they say 0 for a path that is not jackd's loopback
        /// (PipeWire's null devices): then nothing is known to compare with.
        public var expectedRoundtripFrames: Int?
        /// Whether every sample came back identical.
        public var bitExact: Bool
        /// Samples compared, all channels.
        public var samplesCompared: Int
        /// Samples that came back different.
        public var mismatches: Int
        /// Samples one period off in a late cycle (see
        /// `LoopbackAnalysis.lateSamples`); excused only in a run with xruns.
        public var lateSamples: Int
        /// Xruns during the run counted.
        public var xruns: Int
        /// Periods the path returned as silence without an xrun (see
        /// `LoopbackAnalysis.dropouts`).
        public var dropouts: Int
        /// Runs made (a run an xrun spoilt is made again).
        public var attempts: Int
        /// The ports played to.
        public var outputPorts: [String]
        /// The ports read.
        public var inputPorts: [String]

        /// Bit-exact, and the delay is the one expected (when one is).
        public var passed: Bool {
            bitExact && measuredRoundtripFrames != nil
                && (expectedRoundtripFrames == nil || measuredRoundtripFrames == expectedRoundtripFrames)
        }
    }

    /// Whether the ports are jackd's `-L` loopback, whose delay is one period.
    var usesServerLoopback: Bool {
        (outputPorts + inputPorts).allSatisfy { $0.hasPrefix("loopback:") }
    }

    /// Runs the check, retrying a run that an xrun or a dropout disturbed.
    public func run() throws -> Result {
        guard outputPorts.count == inputPorts.count, !outputPorts.isEmpty else {
            throw AudioSessionError(.badParam, "the loopback check needs as many output ports as input ports (got "
                                        + "\(outputPorts.count) out, \(inputPorts.count) in)")
        }
        var result: Result?
        for attempt in 1...max(1, maximumAttempts) {
            var current = try runOnce()
            current.attempts = attempt
            result = current
            if current.passed || (current.xruns == 0 && current.dropouts == 0) { break }
        }
        return result!
    }

    private func runOnce() throws -> Result {
        // Capturing its own test signal is what the caller asked for.
        let session = AudioSession(clientName: clientName, serverName: serverName, recordConsent: .givenByCaller)
        defer { session.close() }
        let watcher = onMediaServicesEvent.map { report in
            let events = session.events
            return Task {
                for await event in events {
                    switch event {
                    case .mediaServicesWereLost, .mediaServicesWereReset: report(event)
                    default: break
                    }
                }
            }
        }
        defer { watcher?.cancel() }
        try session.prepareMeasurement(outputPorts: outputPorts, inputPorts: inputPorts)
        // Open the client first to learn the rate, and the period the run will
        // have: read while active (PipeWire 1.4 lets go of a forced quantum
        // while the node is inactive; the next activation asks for it again).
        try session.setActive(true)
        if let frames = preferredPeriodFrames {
            try session.setPreferredIOBufferDuration(Double(frames) / session.sampleRate)
        }
        let period = session.ioBufferFrames
        let rate = Int(session.sampleRate)
        try session.setActive(false)
        let cycles = Int((duration * Double(rate) / Double(period)).rounded(.up))
        let recorder = RealtimeLoopbackRecorder(signal: TestSignal(seed: seed), channels: inputPorts.count,
                                                period: period, cycles: cycles)
        session.setRenderBlock(recorder.renderBlock)
        try session.setActive(true)
        let xrunsBefore = session.xrunCount
        recorder.arm()
        let deadline = ContinuousClock.now + .seconds(duration * 3 + 5)
        while !recorder.isComplete && !recorder.sawPeriodChange && ContinuousClock.now < deadline { usleep(20_000) }
        let xruns = session.xrunCount - xrunsBefore
        let inputLatency = try session.inputLatencyRange.max
        let outputLatency = try session.outputLatencyRange.max
        let latencySettled = session.reportedLatency.settled
        try session.setActive(false)

        let reported = inputLatency + outputLatency
        let expected: Int? = usesServerLoopback ? period : reported > 0 ? reported : nil
        let analysis = LoopbackAnalysis.analyse(recorder, maximumDelay: max(expected ?? 8192, period) * 4 + 1024)
        // A stale sample is the server's doing only when it said a cycle was late.
        let lateExcused = analysis.lateSamples == 0 || xruns > 0
        return Result(serverName: serverName, sampleRate: rate, periodFrames: period, channels: inputPorts.count,
                      inputLatencyFrames: inputLatency, outputLatencyFrames: outputLatency, latencySettled: latencySettled,
                      measuredRoundtripFrames: analysis.delayFrames, expectedRoundtripFrames: expected,
                      bitExact: analysis.isBitExact && lateExcused && !recorder.sawPeriodChange && recorder.isComplete,
                      samplesCompared: analysis.samplesCompared, mismatches: analysis.mismatches,
                      lateSamples: analysis.lateSamples, xruns: xruns + analysis.discontinuities, dropouts: analysis.dropouts, attempts: 1,
                      outputPorts: outputPorts, inputPorts: inputPorts)
    }
}
