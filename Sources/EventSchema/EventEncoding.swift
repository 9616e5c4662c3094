import Foundation

/// The one way the package writes a JSON line: every `--json` line of
/// `jas`, the `.log` beside a take, the loudness log, the WebSocket stream
/// and `/api/status` go through here.
///
/// Keys are snake_case and sorted; strings keep `/` as it is; a number that
/// is whole prints without a fraction (`48000`, not `48000.0`); a figure
/// there is none of (no reading yet, below the gate, −∞) is `null`, never a
/// made-up number.
public enum EventEncoding {
    /// `value` as one line of JSON (no newline).
    public static func line<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            // Only a non-finite number can fail, and the schema's types write those as null.
            preconditionFailure("\(Value.self) is not encodable as JSON: \(error)")
        }
    }

    /// `value` with the wall-clock `time` it happened at (seconds since 1970) as one line.
    public static func line<Value: Encodable>(_ value: Value, at time: Date) -> String {
        line(Stamped(value, at: time))
    }
}

/// A value with the wall-clock time it happened at, as its `time` key.
public struct Stamped<Value: Encodable>: Encodable {
    public let value: Value
    public let time: Date

    public init(_ value: Value, at time: Date) {
        self.value = value
        self.time = time
    }

    public func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
        var container = encoder.container(keyedBy: EventKey.self)
        try container.encode(time.timeIntervalSince1970, forKey: "time")
    }
}

extension Stamped: Sendable where Value: Sendable {}

/// Any event of the schema, for a list of events of several kinds (a
/// status's recent events).
public struct AnyEvent: Encodable, Sendable {
    private let base: any Encodable & Sendable

    public init(_ base: any Encodable & Sendable) { self.base = base }

    public func encode(to encoder: any Encoder) throws { try base.encode(to: encoder) }
}
