import Foundation
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

    nonisolated(unsafe) static var whenReaderGoes = ReaderGonePolicy.stop
    private static let stdoutLock = NSLock()
    nonisolated(unsafe) private static var readerGone = false

    /// Writes one line to stdout, flushed at once.
    static func line(_ text: String) {
        let gone = stdoutLock.withLock { () -> Bool in
            guard !readerGone else { return false }
            guard (try? FileDescriptor.standardOutput.writeAll(Array((text + "\n").utf8))) == nil else { return false }
            readerGone = true
            return true
        }
        guard gone else { return }
        switch whenReaderGoes {
        case .keepRecording:
            diagnostic("jas: the reader of standard output went away; the recording goes on, and its events go to "
                       + "its log only")
        case .stop:
            // Not from the cleanups of an ending already under way (they print summaries).
            if !Signals.isEnding { Signals.endSoon(exitStatus: 0) }
        }
    }

    /// Writes one JSON object on one line of stdout.
    static func jsonLine<Value: Encodable>(_ value: Value) {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        line(String(decoding: data, as: UTF8.self))
    }

    /// One JSON object on one line, keys sorted, from dictionaries, arrays,
    /// strings, numbers, booleans and NSNull. Written by hand: Foundation's
    /// JSONSerialization compares keys through ICU on Linux and was most of
    /// `jas meter --file --json`'s time.
    static func jsonText(_ value: Any) -> String {
        var text = ""
        appendJSON(value, to: &text)
        return text
    }

    private static func appendJSON(_ value: Any, to text: inout String) {
        switch value {
        case let object as [String: Any]:
            text += "{"
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                appendJSON(key, to: &text)
                text += ":"
                appendJSON(object[key]!, to: &text)
            }
            text += "}"
        case let array as [Any]:
            text += "["
            for (index, element) in array.enumerated() {
                if index > 0 { text += "," }
                appendJSON(element, to: &text)
            }
            text += "]"
        case let string as String:
            text += "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                case _ where scalar.value < 0x20: text += String(format: "\\u%04x", scalar.value)
                default: text.unicodeScalars.append(scalar)
                }
            }
            text += "\""
        case let flag as Bool:
            text += flag ? "true" : "false"
        case let number as Int:
            text += String(number)
        case let number as Int64:
            text += String(number)
        case let number as UInt32:
            text += String(number)
        case let number as UInt64:
            text += String(number)
        case let number as Double:
            text += number.isFinite ? (number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : "\(number)") : "null"
        case let number as Float:
            appendJSON(Double(number), to: &text)
        default:
            text += "null"
        }
    }

    /// Prints `object` with the wall-clock `time` added as one JSON line, flushed at once.
    static func jsonEvent(_ object: [String: Any]) {
        var object = object
        object["time"] = Date().timeIntervalSince1970
        line(jsonText(object))
    }

    /// Writes a line to stderr.
    static func diagnostic(_ line: String) {
        _ = try? FileDescriptor.standardError.writeAll(Array((line + "\n").utf8))
    }

    /// Frames as milliseconds at `rate`, three decimals.
    static func milliseconds(_ frames: Int, rate: Int) -> String {
        rate > 0 ? String(format: "%.3f ms", Double(frames) * 1000 / Double(rate)) : "? ms"
    }
}
