/// A key of the schema, written as it appears in the JSON (`"at_frame"`):
/// each type's `encode(to:)` reads like the line it writes.
public struct EventKey: CodingKey, ExpressibleByStringLiteral, Sendable {
    public let stringValue: String
    public var intValue: Int? { nil }

    public init(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
    public init(stringLiteral value: String) { stringValue = value }
}

extension KeyedEncodingContainer where Key == EventKey {
    /// `value`, or `null` when there is none.
    public mutating func encodeOrNull<Value: Encodable>(_ value: Value?, forKey key: EventKey) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// A measured figure (a level, a loudness) to `decimals` places (two:
    /// 0.01 dB, what a meter can tell), or `null` when there is none or it is
    /// not finite (−∞ dBFS of digital silence, loudness below the gate).
    public mutating func encodeFigure(_ value: Double?, decimals: Int = 2, forKey key: EventKey) throws {
        try encodeOrNull(Figure.rounded(value, decimals: decimals), forKey: key)
    }
}

/// How the schema rounds a measured figure.
public enum Figure {
    /// `value` to `decimals` places; nil when absent or not finite. Never
    /// −0 (a level of −0.001 dB prints as 0).
    public static func rounded(_ value: Double?, decimals: Int = 2) -> Double? {
        guard let value, value.isFinite else { return nil }
        let scale = pow10(decimals)
        return (value * scale).rounded() / scale + 0.0
    }

    private static func pow10(_ exponent: Int) -> Double {
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }
}
