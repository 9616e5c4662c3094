import JackAudioSession
import Capture
import EventSchema
import Foundation
import JackKit
import Metering
import Recording
import Synchronization
import SystemPackage

/// Where `jas` writes: JSON Lines or human text on stdout, diagnostics on stderr.
///
/// SIGPIPE is ignored in `jas` (no thread dies of a reader that went away),
/// so every line to stdout goes through `line`, which notices when the
/// reader has gone (`jas meter --json | head -1`): the command then ends as
/// on Ctrl-C, with status 0 — except a recording, which goes on
/// (`whenReaderGoes = .keepRecording`) and writes nothing more to stdout.
enum Output {
    enum ReaderGonePolicy { case stop, keepRecording }

    /// What the command does when the reader goes (set before its first output).
    static var whenReaderGoes: ReaderGonePolicy {
        get { readerGonePolicy.withLock { $0 } }
        set { readerGonePolicy.withLock { $0 = newValue } }
    }
    private static let readerGonePolicy = Mutex(ReaderGonePolicy.stop)
    /// Whether the reader of stdout went away; held while a line is written, so lines never interleave.
    private static let readerGone = Mutex(false)

    /// Writes one line to stdout, flushed at once.
    static func line(_ text: String) {
        let gone = readerGone.withLock { readerGone -> Bool in
            guard !readerGone else { return false }
            guard (try? FileDescriptor.standardOutput.writeAll(Array((text + "\n").utf8))) == nil else { return false }
            readerGone = true
            return true
        }
        if gone { readerWent() }
    }


    /// Looks at stdout twice a second: a pipe whose reader has gone reports
    /// an error even while nothing is written (a monitor that prints only on
    /// events would otherwise notice at its next event). The timer's handler
    /// holds the timer (alive until it cancels itself).
    static func watchReader() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "jas.stdout-reader"))
        timer.schedule(deadline: .now() + 0.5, repeating: 0.5)
        timer.setEventHandler {
            var poller = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
            guard poll(&poller, 1, 0) == 1, poller.revents & Int16(POLLERR) != 0 else { return }
            let first = readerGone.withLock { readerGone -> Bool in
                defer { readerGone = true }
                return !readerGone
            }
            if first { readerWent() }
            timer.cancel()
        }
        timer.resume()
    }

    private static func readerWent() {
        switch whenReaderGoes {
        case .keepRecording:
            diagnostic("jas: the reader of standard output went away; the recording goes on, and its events go to "
                       + "its log only")
        case .stop:
            // Not from the cleanups of an ending already under way (they print summaries).
            if !Signals.isEnding { Signals.endSoon(exitStatus: 0) }
        }
    }

    /// Writes one value of the schema on one line of stdout.
    static func jsonLine<Value: Encodable>(_ value: Value) {
        line(EventEncoding.line(value))
    }

    /// Writes one value of the schema on one line of stdout, stamped with the time now.
    static func jsonEvent<Value: Encodable>(_ value: Value) {
        line(EventEncoding.line(value, at: Date()))
    }

    /// A name from elsewhere (a port, a client) as it may be printed: control
    /// characters and escape sequences shown as `\u{1B}`, never sent to the terminal.
    static func safe(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                shown += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// What went wrong, as a person reads it: an audio-session error's
    /// message without AVAudioSession's numeric code (that is for programs,
    /// and `--json` events carry it by name), any other error as it says.
    static func reason(_ error: any Error) -> String {
        // A file or port name may hold a newline or an escape: shown, never obeyed.
        safe(unescapedReason(error))
    }

    private static func unescapedReason(_ error: any Error) -> String {
        let sessionError = underlyingSessionError(error)
        let message = sessionError?.message ?? "\(error)"
        // The library names the server, the ports, the layout; which flag picks others is jas's to say.
        let jackError = sessionError?.cause ?? error as? JackError
        if case .serverNotRunning? = jackError { return message + " (--server NAME)" }
        if case .metadataStoreDamaged? = jackError { return message + " (`jas metadata-store repair` does it safely)" }
        if case .metadataStoreLocked? = jackError { return message + " (`jas metadata-store repair` removes it and names them)" }
        if case let .portNotFound(_, server)? = jackError { return message + " (`jas status --server \(server)` too)" }
        if case let .tooFewPorts(channels, _)? = underlyingCaptureError(error) { return message + " (--channels \(channels))" }
        if case .layoutMismatch? = error as? MeteringError { return message + " (--layout)" }
        if case .unwritableLog? = error as? MeteringError { return message + " (--log)" }
        if let error = error as? RecordingError, let advice = advice(for: error) { return message + " (\(advice))" }
        return message
    }

    /// Which of `jas record`'s options changes what a recording's error names.
    private static func advice(for error: RecordingError) -> String? {
        switch error {
        case let .invalidSetting(setting, _):
            switch setting {
            case .channels: "--channels"
            case .duration: "--for"
            case .rotation: "--rotate"
            case .buffer: "--buffer"
            case .preroll: "--preroll"
            case .trigger: "--trigger"
            case .silenceThreshold: "--silence-threshold"
            case .silenceHold: "--silence-hold"
            case .onSilence: "--on-silence"
            case .onSignal: "--on-signal"
            }
        case .insufficientSpace: "shorten --for"
        case .formatCannotHoldSamples: "--bits 16 or 24, or --format wav, rf64 or w64"
        case let .tooManyChannels(container, _): "--per-channel" + (container == .flac ? ", or --format rf64 or w64" : ", or --ports")
        case let .pipeOutput(_, rotates): rotates ? "drop --rotate" : "--format flac, without --per-channel"
        case .outputExists: "choose another --output, or add --overwrite to replace it"
        case .outputBusy, .logNameClash: "choose another --output"
        case .unwritablePath: "--output"
        default: nil
        }
    }

    /// The session's error a library error carries, if any.
    private static func underlyingSessionError(_ error: any Error) -> AudioSessionError? {
        switch error {
        case let error as AudioSessionError: error
        case RecordingError.session(let error), MeteringError.session(let error): error
        default: if case .session(let error)? = underlyingCaptureError(error) { error } else { nil }
        }
    }

    /// The tap's error a recording's or a meter's error carries, if any.
    private static func underlyingCaptureError(_ error: any Error) -> CaptureError? {
        switch error {
        case let error as CaptureError: error
        case RecordingError.capture(let error), MeteringError.capture(let error): error
        default: nil
        }
    }

    /// Writes a line to stderr.
    static func diagnostic(_ line: String, newline: Bool = true) {
        _ = try? FileDescriptor.standardError.writeAll(Array((newline ? line + "\n" : line).utf8))
    }

    /// Said next to latencies that JACK does not hold for the session's own ports (`ReportedLatency.settled`).
    static let latencyNotSettled = "not settled in JACK: the session's own ports read otherwise (jackd runs no latency "
        + "callback for a client whose outputs come back to its inputs, as through the -L loopback), so clients "
        + "downstream of the session see other values; these are the connected ports' ranges"

    /// Frames as milliseconds at `rate`, three decimals.
    static func milliseconds(_ frames: Int, rate: Int) -> String {
        rate > 0 ? String(format: "%.3f ms", Double(frames) * 1000 / Double(rate)) : "? ms"
    }
}
