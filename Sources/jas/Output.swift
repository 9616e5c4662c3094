import Foundation
import SystemPackage

/// Where `jas` writes: JSON Lines or human text on stdout, diagnostics on stderr.
enum Output {
    /// Writes one JSON object on one line of stdout.
    static func jsonLine<Value: Encodable>(_ value: Value) {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        print(String(decoding: data, as: UTF8.self))
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
