import Foundation

/// Where the watch server listens: `ADDR:PORT`, `[IPv6]:PORT`, or `PORT`
/// alone (then 127.0.0.1, reachable from this machine only). The address is
/// numeric or `localhost`; port 0 asks the system for a free port.
public struct WatchAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    public init(parsing text: String) throws(WatchError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var host = "127.0.0.1"
        var portText = trimmed
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else {
                throw .badAddress(text, reason: "an IPv6 address in brackets needs its ']'")
            }
            host = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.hasPrefix(":") else { throw .badAddress(text, reason: "a port must follow the address, after ':'") }
            portText = String(rest.dropFirst())
        } else if let colon = trimmed.lastIndex(of: ":") {
            if trimmed[..<colon].contains(":") {
                throw .badAddress(text, reason: "write an IPv6 address in brackets, e.g. [::1]:8080")
            }
            let given = String(trimmed[..<colon])
            if !given.isEmpty { host = given }
            portText = String(trimmed[trimmed.index(after: colon)...])
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw .badAddress(text, reason: "'\(portText)' is not a port (0 to 65535)")
        }
        guard host == "localhost" || Self.isNumeric(host) else {
            throw .badAddress(text, reason: "'\(host)' is not a numeric IP address (or localhost)")
        }
        self.host = host == "localhost" ? "127.0.0.1" : host
        self.port = port
    }

    /// Whether only this machine can reach the address (127.0.0.0/8, ::1).
    public var isLoopback: Bool {
        if host == "::1" { return true }
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { return false }
        return UInt32(bigEndian: address.s_addr) >> 24 == 127
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    private static func isNumeric(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}

/// The token the control routes ask for in `Authorization: Bearer TOKEN`.
public struct WatchToken: Sendable, Equatable {
    public let value: String

    /// At least 8 characters from RFC 6750's token alphabet (letters, digits, `-._~+/`, trailing `=`).
    public init(_ value: String) throws(WatchError) {
        guard value.count >= 8 else {
            throw .badToken(reason: "it has \(value.count) characters; give at least 8 (e.g. from `openssl rand -hex 16`)")
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/")
        let body = value.reversed().drop { $0 == "=" }
        guard !body.isEmpty, body.allSatisfy({ allowed.contains($0) }) else {
            throw .badToken(reason: "use letters, digits and -._~+/ only (it is sent in an HTTP header)")
        }
        self.value = value
    }

    /// Whether an `Authorization` header carries this token as a bearer token.
    func accepts(authorization header: String?) -> Bool {
        guard let header, header.hasPrefix("Bearer ") else { return false }
        return matches(String(header.dropFirst("Bearer ".count)))
    }

    /// Whether `text` is this token (compared in constant time).
    func matches(_ text: String) -> Bool {
        let given = Array(text.utf8)
        let expected = Array(value.utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in expected.indices {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }
}
