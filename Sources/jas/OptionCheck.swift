import Foundation
import ArgumentParser
import Recording
import JackAudioSession
import JackKit

/// The one rule for option values: a value out of its range is a usage
/// error, found before anything starts, naming the option, its range and the
/// value given; `jas` exits 64 for it (what ArgumentParser gives every
/// ValidationError). Failures met while working (a server, a port, a file)
/// exit 2.
enum OptionCheck {
    /// The longest `--for`: a year.
    static let longestRun = 31_536_000.0

    /// A number of seconds: finite, more than 0 (or 0 too with `allowZero`), at most `maximum`.
    static func seconds(_ value: Double?, _ option: String, allowZero: Bool = false, maximum: Double = longestRun) throws {
        guard let value else { return }
        guard value.isFinite, allowZero ? value >= 0 : value > 0, value <= maximum else {
            throw ValidationError("\(option) must be \(allowZero ? "0" : "more than 0") to \(format(maximum)) seconds, "
                                  + "not \(value)")
        }
    }

    /// A `--period`: what the session may ask a JACK server for, frames.
    static func period(_ value: Int?) throws {
        let range = BufferDuration.minimumFrames...JackPeriod.maximumFrames
        guard let value, !range.contains(value) else { return }
        throw ValidationError("--period must be \(range.lowerBound)…\(range.upperBound) frames, got \(value)")
    }

    /// A finite number within `range`.
    static func number(_ value: Double, _ option: String, in range: ClosedRange<Double>, unit: String) throws {
        guard value.isFinite, range.contains(value) else {
            throw ValidationError("\(option) must be \(format(range.lowerBound)) to \(format(range.upperBound)) \(unit), "
                                  + "not \(value)")
        }
    }

    /// A duration written as `100ms`, `10s`, `5min`, `1h`, `30d` or a plain number
    /// of seconds, within `range` seconds; `example` shows the form in the message.
    static func duration(_ text: String, _ option: String, in range: ClosedRange<Double>, example: String) throws -> Double {
        let lowered = text.lowercased().trimmingCharacters(in: .whitespaces)
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("min", 60), ("m", 60), ("h", 3600), ("d", 86_400),
                                                          ("s", 1)]
        let unit = units.first { lowered.hasSuffix($0.suffix) }
        let number = Double(lowered.dropLast(unit?.suffix.count ?? 0))
        guard let number, number.isFinite, range.contains(number * (unit?.seconds ?? 1)) else {
            throw ValidationError("\(option) must be a duration from \(spoken(range.lowerBound)) to \(spoken(range.upperBound)), "
                                  + "e.g. \(example), not '\(text)'")
        }
        return number * (unit?.seconds ?? 1)
    }

    /// Room on a disk written as `10G`, `500MiB`, `2TB`, plain bytes, or
    /// `5%` of the file system (units are powers of 1024, as df -h counts).
    static func space(_ text: String, _ option: String) throws -> Retention.MinimumFree {
        let lowered = text.lowercased().trimmingCharacters(in: .whitespaces)
        if lowered.hasSuffix("%") {
            guard let percent = Double(lowered.dropLast()), percent > 0, percent < 100 else {
                throw ValidationError("\(option) must be a share of the disk above 0% and below 100%, e.g. 10%, not '\(text)'")
            }
            return .percent(percent)
        }
        var number = lowered
        for suffix in ["ib", "b"] where number.hasSuffix(suffix) && number.count > suffix.count {
            number.removeLast(suffix.count)
            break
        }
        let units: [Character: Double] = ["k": 1024, "m": 1_048_576, "g": 1_073_741_824, "t": 1_099_511_627_776]
        var scale = 1.0
        if let last = number.last, let unit = units[last] {
            scale = unit
            number.removeLast()
        }
        guard let value = Double(number), value.isFinite, value > 0, value * scale < 9e18 else {
            throw ValidationError("\(option) must be an amount of space, e.g. 10G, 500M or 5%, not '\(text)'")
        }
        return .bytes(Int64(value * scale))
    }

    /// Seconds as a person writes them: 10ms, 60s, 24h.
    private static func spoken(_ seconds: Double) -> String {
        if seconds < 1 { return format(seconds * 1000) + "ms" }
        if seconds >= 3600 && seconds.truncatingRemainder(dividingBy: 3600) == 0 { return format(seconds / 3600) + "h" }
        return format(seconds) + "s"
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

extension OptionCheck {
    /// A frequency as people type it: `997Hz`, `1kHz`, `997`.
    static func hertz(_ text: String, option: String = "--frequency") throws -> Double {
        var number = text.lowercased().trimmingCharacters(in: .whitespaces)
        var scale = 1.0
        if number.hasSuffix("khz") {
            scale = 1000
            number.removeLast(3)
        } else if number.hasSuffix("hz") {
            number.removeLast(2)
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, value > 0 else {
            throw ValidationError("\(option) must be a frequency, e.g. 997Hz, 1kHz or 997, not '\(text)'")
        }
        return value * scale
    }

    /// A level as people type it: `-20dBFS`, `-20`, `0dBFS`.
    static func dBFS(_ text: String, option: String = "--level") throws -> Double {
        var number = text.lowercased().trimmingCharacters(in: .whitespaces)
        for suffix in ["dbfs", "db"] where number.hasSuffix(suffix) {
            number.removeLast(suffix.count)
            break
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, value <= 0, value > -200 else {
            throw ValidationError("\(option) must be a level of at most 0 dBFS (a full-scale sine, AES17), e.g. -1dBFS or -20, "
                                  + "not '\(text)'")
        }
        return value
    }

    /// A step or difference in decibels as people type it: `1dB`, `0.5`.
    static func decibels(_ text: String, _ option: String, in range: ClosedRange<Double>) throws -> Double {
        var number = text.lowercased().trimmingCharacters(in: .whitespaces)
        if number.hasSuffix("db") { number.removeLast(2) }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw ValidationError("\(option) must be between \(format(range.lowerBound)) and \(format(range.upperBound)) dB, "
                                  + "e.g. 1dB or 2, not '\(text)'")
        }
        return value
    }

    /// A distortion figure as people type it, in dB against the fundamental: `1%`, `0.1 %`, `-40dB`.
    static func distortion(_ text: String, _ option: String) throws -> Double {
        var number = text.lowercased().trimmingCharacters(in: .whitespaces)
        let percent = number.hasSuffix("%")
        if percent { number.removeLast() } else if number.hasSuffix("db") { number.removeLast(2) }
        let value = Double(number.trimmingCharacters(in: .whitespaces))
        if let value, percent, value > 0, value <= 100 { return 20 * log10(value / 100) }
        if let value, !percent, value < 0, value >= -200 { return value }
        throw ValidationError("\(option) must be a distortion figure, a percentage or dB below the fundamental, e.g. 1% or -40dB, "
                              + "not '\(text)'")
    }

    /// A file to be written after a measurement: its folder must be there, so
    /// a mistyped path fails before the measurement, not after it.
    static func writableFolder(of path: String?, _ option: String) throws {
        guard let path else { return }
        let folder = (path as NSString).deletingLastPathComponent
        let where_ = folder.isEmpty ? "." : folder
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: where_, isDirectory: &isFolder), isFolder.boolValue,
              FileManager.default.isWritableFile(atPath: where_) else {
            throw ValidationError("\(option) '\(path)': the folder '\(where_)' is not there or not writable; make it first")
        }
    }

    /// A fraction of an octave as people type it: `1/6`, `6`, `1/24 octave`; nil stays nil.
    static func octaveFraction(_ text: String?, option: String = "--smoothing") throws -> Int? {
        guard let text else { return nil }
        var number = text.lowercased().trimmingCharacters(in: .whitespaces)
        for suffix in ["octave", "oct"] where number.hasSuffix(suffix) {
            number = String(number.dropLast(suffix.count)).trimmingCharacters(in: .whitespaces)
            break
        }
        if number.hasPrefix("1/") { number.removeFirst(2) }
        guard let fraction = Int(number), (3...48).contains(fraction) else {
            throw ValidationError("\(option) must be a fraction of an octave from 1/3 to 1/48, e.g. 1/6 or 1/24, not '\(text)'")
        }
        return fraction
    }
}
