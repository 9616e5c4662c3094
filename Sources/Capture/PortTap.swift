import JackAudioSession
import Foundation
import JackKit
import JackRuntime

/// Listening to JACK ports without disturbing anyone: what a recorder and a
/// meter share. The session is an input-only, measurement-mode playAndRecord
/// session with `.mixWithOthers`: it neither interrupts a player nor is
/// stopped by one (only a call interrupts it), and it hands the render block
/// the JACK buffers themselves.
public enum PortTap {
    /// The ports `patterns` match on `serverName` (see `PortSelection`) and
    /// the server's sample rate, read with a short-lived probe client.
    public static func resolve(_ patterns: [String], channels: Int?, serverName: String,
                               clientName: String) throws(CaptureError) -> (ports: [String], sampleRate: Int) {
        let probe: Client
        do {
            probe = try Client.checkedOpen(name: "\(clientName)-probe", serverName: serverName)
        } catch {
            throw .session(AudioSessionError(.mediaServicesFailed, error.description, cause: error))
        }
        defer { probe.close() }
        return (try PortSelection.resolve(patterns, channels: channels, on: probe), probe.sampleRate)
    }

    /// Sets `session` up to listen to `ports` with `renderBlock` and activates it.
    public static func activate(_ session: AudioSession, listeningTo ports: [String],
                                renderBlock: @escaping RenderBlock) throws(AudioSessionError) {
        try session.setCategory(.playAndRecord, mode: .measurement, options: .mixWithOthers)
        try session.setPreferredOutputNumberOfChannels(0)
        try session.setPreferredInputNumberOfChannels(ports.count)
        session.setPreferredInputPortNames(ports)
        session.setRenderBlock(renderBlock)
        try session.setActive(true)
    }

    /// After an interruption ended, activates `session` again, as the seeds'
    /// guideline for recording and metering apps says (with or without
    /// shouldResume). A refusal (a call still holds the audio) is reported
    /// once and tried again every half second, until it works or `stopped`.
    public static func activateAgain(_ session: AudioSession, stopped: @escaping @Sendable () -> Bool,
                                     refused: @escaping @Sendable (AudioSessionError) -> Void = { _ in },
                                     resumed: @escaping @Sendable (_ attempts: Int) -> Void = { _ in },
                                     attempt: Int = 1) {
        guard !stopped(), !session.isActive else { return }
        do {
            try session.setActive(true)
            resumed(attempt)
        } catch {
            if attempt == 1 { refused(error) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
                activateAgain(session, stopped: stopped, refused: refused, resumed: resumed, attempt: attempt + 1)
            }
        }
    }

    /// The JACK frame time from which the session's input ports are
    /// connected: the session starts processing before it connects, so
    /// earlier cycles heard nothing.
    ///
    /// A connection is heard from the cycle whose graph has it: jackd switches
    /// graphs at a cycle's start, and puts the switch off while the previous
    /// graph has not finished (`JackEngine::Process`). So this first waits, at
    /// most a second and looking at each cycle's end, until each port's connections read back from
    /// the graph jackd runs (a pending change makes libjack sleep a period
    /// first), then gives the cycle after the current one by the cycles' own
    /// clock (`jack_last_frame_time`, what a capture stamps its cycles with).
    /// Not `jack_frame_time`, which extrapolates through a filter and was seen
    /// tens of periods behind the cycles after jackd was held back; a start
    /// placed by it came before the last ports' connections and wrote their
    /// first periods as silence heard (docs/JACK-FINDINGS.md,
    /// `RecordFrameTimeLagTests`).
    public static func connectedFrom(_ session: AudioSession) -> UInt32? {
        guard let client = session.client else { return nil }
        let ports = session.inputPortNames.compactMap { client.port(named: $0) }
        session.awaitCycles(within: 1) { !ports.contains { $0.connections.isEmpty } }
        return client.cycleFrameTime &+ UInt32(client.bufferSize)
    }
}
