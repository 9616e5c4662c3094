import JackAudioSession
import Capture
import EventSchema
import Foundation
import Metering
import RemoteWatch
import Synchronization

/// What `jas meter` shows: on a terminal, bars with peak hold and numbers
/// redrawn in place (80 columns); piped, one line a second; with --json, one
/// object per reading and a summary. With `--http`, every object also goes
/// to the watch board, whatever is shown here.
final class MeterDisplay: Sendable {
    let json: Bool
    private let terminal = isatty(STDOUT_FILENO) != 0

    /// What is shown where, and what has been drawn: one caller at a time
    /// (the meter's thread, the session's events, Ctrl-C), so that lines
    /// never interleave.
    private struct State {
        var watch: WatchBoard?
        var log: LoudnessLog?
        var linesDrawn = 0
        /// The terminal's size at the last redraw (columns, rows).
        var drawnSize: (columns: Int, rows: Int)?
        var holds: [(level: Double, until: Double)] = []
        var lastPrinted = -1.0
    }

    private let state = Mutex(State())

    /// Set before metering starts.
    var watch: WatchBoard? {
        get { state.withLock { $0.watch } }
        set { state.withLock { $0.watch = newValue } }
    }

    /// The compliance log the meter's alarms, dead air and server events go in too (set before metering starts).
    var log: LoudnessLog? {
        get { state.withLock { $0.log } }
        set { state.withLock { $0.log = newValue } }
    }
    static let barWidth = 24
    static let holdSeconds = 2.0

    init(json: Bool) { self.json = json }

    func announce(ports: [String], server: String) {
        if !json { Output.diagnostic("metering \(ports.joined(separator: ", ")) on '\(server)' (Ctrl-C: summary)") }
    }

    func show(_ reading: MeterReading) {
        state.withLock { state in
            if json { Output.line(EventEncoding.line(reading, at: Date())) }
            state.watch?.publish(reading)
            if json {
                return
            } else if terminal {
                Self.draw(reading, into: &state)
            } else if reading.seconds - state.lastPrinted >= 1 {
                state.lastPrinted = reading.seconds
                Output.line(Self.programmeLine(reading))
            }
        }
    }

    func event(_ event: AudioSessionEvent) {
        state.withLock { state in
            if json {
                Output.line(EventFormat.json(event))
            } else {
                Output.diagnostic(EventFormat.text(event))
            }
            state.watch?.publish(event)
            state.log?.note(event)
        }
    }

    /// An event only the watch hears (an xrun: the summary counts them for stdout).
    func eventForWatch(_ event: AudioSessionEvent) {
        watch?.publish(event)
    }

    /// Dead air on the metered channels, or its end.
    func silence(_ change: SilenceAlarm.Change, tick: Double) {
        state.withLock { state in
            let (seconds, silent) = (Double(change.atFrame) * tick, Double(change.silentFrames) * tick)
            emit(change.kind == .silence
                 ? .silence(channels: change.channels, levelDBFS: change.levelDBFS, seconds: seconds, silentSeconds: silent)
                 : .signal(channels: change.channels, levelDBFS: change.levelDBFS, seconds: seconds, silentSeconds: silent), state)
            if !json {
                let what = change.kind == .silence ? "silence" : "signal back"
                Output.diagnostic(String(format: "%.1f s: %@ on channel%@ %@ (%.1f s of silence)", Double(change.atFrame) * tick,
                                         what, change.channels.count == 1 ? "" : "s",
                                         change.channels.map(String.init).joined(separator: ", "),
                                         Double(change.silentFrames) * tick))
            }
        }
    }

    /// A compliance alarm starts or ends.
    func loudnessAlarm(_ change: LoudnessAlarm.Change, target: LoudnessTarget) {
        state.withLock { state in
            emit(.loudnessAlarm(change, target: target), state)
            guard !json else { return }
            let what: String
            switch change.kind {
            case .tooLoud: what = String(format: "too loud: short-term up to %.1f LUFS, over %.1f", change.level, change.threshold)
            case .tooQuiet: what = String(format: "too quiet: short-term down to %.1f LUFS, under %.1f", change.level, change.threshold)
            case .truePeakOver: what = String(format: "true peak %.1f dBTP, over %.1f", change.level, change.threshold)
            }
            Output.diagnostic(String(format: "%.1f s: ", change.seconds)
                              + (change.on ? "LOUDNESS ALARM \(what) (\(target))"
                                           : "loudness alarm ended (\(change.kind.rawValue.replacingOccurrences(of: "_", with: " ")), "
                                             + String(format: "%.1f s)", change.lastedSeconds ?? 0)))
        }
    }

    /// Metered ports that went away or came back.
    func source(_ change: LiveMeter.SourceChange) {
        state.withLock { state in
            let ports = change.ports.joined(separator: ", ")
            emit(.source(ports: change.ports, seconds: change.seconds, awaySeconds: change.awaySeconds,
                         returned: change.returned), state)
            if json {
                return
            } else if let away = change.awaySeconds {
                Output.diagnostic(String(format: "%.1f s: ", change.seconds) + "\(ports) "
                                  + (change.returned ? String(format: "back after %.1f s", away)
                                                     : String(format: "never came back (%.1f s)", away)))
            } else {
                Output.diagnostic(String(format: "%.1f s: ", change.seconds) + "\(ports) went away: metering silence until "
                                  + (change.ports.count == 1 ? "it comes" : "they come") + " back")
            }
        }
    }

    /// A reset, pause or resume of the programme's loudness.
    func programme(_ change: MeterEvent.ProgrammeChange, seconds: Double) {
        state.withLock { state in
            emit(.programme(change, seconds: seconds), state)
            if !json {
                let what = switch change {
                case .reset: "integrated loudness and LRA start again"
                case .paused: "integrated loudness and LRA paused"
                case .resumed: "integrated loudness and LRA resumed"
                }
                Output.diagnostic(String(format: "%.1f s: ", seconds) + what)
            }
        }
    }

    /// Something that makes the figures less than the whole truth: a line on
    /// stderr, or a `warning` event.
    func warn(_ message: String) {
        state.withLock { state in
            emit(.warning(message: message), state)
            if !json {
                Output.diagnostic("jas meter: warning: " + Output.safe(message))
            }
        }
    }

    func finish(_ summary: MeterSummary) {
        state.withLock { state in
            if json { Output.line(EventEncoding.line(summary, at: Date())) }
            state.watch?.publish(event: summary)
            if json { return }
            Output.line(String(format: "%.1f s metered (%@, %d Hz)", summary.seconds, summary.layout, summary.sampleRate))
            Output.line("integrated \(Self.lufs(summary.integratedLUFS)) LUFS  LRA \(Self.number(summary.lraLU)) LU  "
                  + "true peak \(Self.number(summary.truePeakDBTP)) dBTP")
            for channel in summary.channels {
                Output.line(String(format: "%2d %@ peak %@ tp %@ rms %@ ppm %@", channel.channel,
                             Self.shortName(channel.source).padding(toLength: 16, withPad: " ", startingAt: 0),
                             Self.number(channel.samplePeakDBFS), Self.number(channel.truePeakDBTP),
                             Self.number(channel.rmsDBFS), Self.number(channel.ppmTypeIIbDBFS)))
            }
        }
    }

    /// Redraws the programme line and one line per channel in place.
    private static func draw(_ reading: MeterReading, into state: inout State) {
        if state.holds.count != reading.channels.count {
            state.holds = Array(repeating: (-.infinity, 0), count: reading.channels.count)
        }
        var lines = [programmeLine(reading)]
        for (index, channel) in reading.channels.enumerated() {
            if channel.samplePeakDBFS >= state.holds[index].level || reading.seconds > state.holds[index].until {
                state.holds[index] = (channel.samplePeakDBFS, reading.seconds + Self.holdSeconds)
            }
            lines.append(Self.channelLine(channel, hold: state.holds[index].level))
        }
        // Fitted to the terminal as it is now: a line that wrapped would put
        // the next redraw's cursor-up in the wrong place. A terminal that was
        // resized has reflowed what was drawn: it is cleared and drawn afresh.
        let size = Self.terminalSize()
        let fitted = Self.fit(lines, columns: size.columns, rows: size.rows)
        var text: String
        if state.linesDrawn > 0, let drawnSize = state.drawnSize, drawnSize != size {
            text = "\u{1B}[H\u{1B}[2J"
        } else {
            text = state.linesDrawn > 0 ? "\u{1B}[\(state.linesDrawn)A" : ""
        }
        for line in fitted { text += "\r" + line + "\u{1B}[K\n" }
        state.linesDrawn = fitted.count
        state.drawnSize = size
        Output.line(String(text.dropLast()))
    }

    /// Standard output's terminal size; 80×24 when it says none.
    static func terminalSize() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// `lines` cut to what a terminal of `columns` × `rows` shows without
    /// wrapping or scrolling: each line at most `columns` − 1 characters (the
    /// last column would wrap on some terminals), at most `rows` − 1 lines (the
    /// cursor rests below them); channels that do not fit are counted on the last line.
    static func fit(_ lines: [String], columns: Int, rows: Int) -> [String] {
        let width = max(1, columns - 1), height = max(1, rows - 1)
        var shown = lines
        if shown.count > height {
            let hidden = shown.count - (height - 1)
            shown = Array(shown.prefix(height - 1)) + ["… \(hidden) more channel\(hidden == 1 ? "" : "s"): a taller terminal shows them"]
            if height == 1 { shown = [lines[0]] }
        }
        return shown.map { String($0.prefix(width)) }
    }

    static func programmeLine(_ reading: MeterReading) -> String {
        String(format: "%7.1f s  M %@  S %@  I %@ LUFS  LRA %@ LU", reading.seconds, lufs(reading.momentaryLUFS),
               lufs(reading.shortTermLUFS), lufs(reading.integratedLUFS), number(reading.loudnessRangeLU))
    }

    /// "NN name [PPM IIb bar, held peak] pk tp vu", at most 80 columns.
    static func channelLine(_ channel: ChannelReading, hold: Double) -> String {
        String(format: "%2d %@ [%@] pk%@ tp%@ vu%@", channel.channel,
               shortName(channel.source).padding(toLength: 10, withPad: " ", startingAt: 0),
               bar(channel.ppmTypeIIbDBFS, hold: hold), number(channel.samplePeakDBFS),
               number(channel.truePeakDBTP), number(channel.vu))
    }

    /// A port's short name, or a file channel's "channel N".
    static func shortName(_ source: String) -> String {
        if let range = source.range(of: " channel ", options: .backwards) { return String(source[range.lowerBound...].dropFirst()) }
        return source.split(separator: ":").last.map(String.init) ?? source
    }

    /// A bar from −60 to 0 dBFS, with the held peak as '|'.
    static func bar(_ level: Double, hold: Double) -> String {
        func cells(_ decibels: Double) -> Int {
            decibels.isFinite ? max(0, min(barWidth, Int(((decibels + 60) / 60 * Double(barWidth)).rounded()))) : 0
        }
        var bar = Array(repeating: Character("-"), count: barWidth)
        for index in 0..<cells(level) { bar[index] = "#" }
        let held = cells(hold)
        if held > 0 { bar[held - 1] = "|" }
        return String(bar)
    }

    static func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "  -inf" }
        return String(format: "%6.1f", value)
    }

    static func lufs(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "  --- " }
        return String(format: "%6.1f", value)
    }

    /// Prints the event with --json, and hands it to the watch.
    private func emit(_ event: MeterEvent, _ state: State) {
        if json { Output.line(EventEncoding.line(event, at: Date())) }
        state.watch?.publish(event)
        switch event {
        case .silence, .signal, .source, .loudnessAlarm: state.log?.note(event)
        case .programme, .warning: break // the programme's commands are logged where they are carried out
        }
    }
}
