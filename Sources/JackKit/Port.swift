import CJack
import Glibc

/// JACK port flags (`JackPortIsInput`, `JackPortIsPhysical`, ...).
public struct PortFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The port receives data (a sink).
    public static let input = PortFlags(rawValue: UInt(JackPortIsInput.rawValue))
    /// The port produces data (a source).
    public static let output = PortFlags(rawValue: UInt(JackPortIsOutput.rawValue))
    /// The port is backed by hardware (or stands in for it).
    public static let physical = PortFlags(rawValue: UInt(JackPortIsPhysical.rawValue))
    /// The port can monitor its input.
    public static let canMonitor = PortFlags(rawValue: UInt(JackPortCanMonitor.rawValue))
    /// Data ends or starts here; it is not passed on from another port.
    public static let terminal = PortFlags(rawValue: UInt(JackPortIsTerminal.rawValue))
}

/// The data a port carries.
public enum PortType: String, Sendable {
    /// 32-bit float mono audio.
    case audio = "32 bit float mono audio"
    /// Raw MIDI.
    case midi = "8 bit raw midi"
}

/// A port of any client on the server, by handle, as seen through the client
/// it was taken from. Valid while that client is open, the server runs and
/// the port stays registered; once the client closes, it reads as a port
/// libjack no longer knows (empty name, no connections, zero latency).
public struct Port: @unchecked Sendable, Hashable { // holds libjack's port handle; every call on it runs inside its client's liveness check
    /// The libjack handle (`jack_port_t *`).
    public let handle: OpaquePointer
    /// The client the handle was taken from: every call runs while it is open.
    private let liveness: ClientLiveness

    init(_ handle: OpaquePointer, of liveness: ClientLiveness) {
        self.handle = handle
        self.liveness = liveness
    }

    public static func == (lhs: Port, rhs: Port) -> Bool { lhs.handle == rhs.handle }
    public func hash(into hasher: inout Hasher) { hasher.combine(handle) }

    /// Runs a libjack call on the port while its client is open.
    private func read<T>(_ body: (OpaquePointer) -> T?) -> T? {
        liveness.whileOpen { body(handle) } ?? nil
    }

    /// Full name, `client:port` ("" once libjack no longer knows the port).
    public var name: String { read { jack_port_name($0).map { printableName($0) } } ?? "" }

    /// The part after the colon ("" once libjack no longer knows the port).
    public var shortName: String { read { jack_port_short_name($0).map { String(cString: $0) } } ?? "" }

    /// The port's flags.
    public var flags: PortFlags { PortFlags(rawValue: UInt(bitPattern: Int(read { jack_port_flags($0) } ?? 0))) }

    /// The port's type string (`32 bit float mono audio` for audio).
    public var typeName: String { read { jack_port_type($0).map { String(cString: $0) } } ?? "" }

    /// The port's UUID (metadata subject; 0 once libjack no longer knows the port).
    public var uuid: UInt64 { read { jack_port_uuid($0) } ?? 0 }

    /// Aliases the port carries (up to two in JACK).
    public var aliases: [String] {
        read { handle in
            let size = Int(jack_port_name_size())
            let first = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            let second = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            defer { first.deallocate(); second.deallocate() }
            var slots: [UnsafeMutablePointer<CChar>?] = [first, second]
            let count = slots.withUnsafeMutableBufferPointer { jack_port_get_aliases(handle, $0.baseAddress) }
            return (0..<Int(max(0, count))).map { String(cString: slots[$0]!) }
        } ?? []
    }

    /// Full names of the ports this one is connected to.
    public var connections: [String] {
        read { handle in
            guard let list = jack_port_get_connections(handle) else { return [] }
            defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
            return stringList(list)
        } ?? []
    }

    /// The latency range JACK holds for this port in the given mode, frames.
    public func latencyRange(_ mode: LatencyMode) -> LatencyRange {
        var range = jack_latency_range_t()
        _ = read { jack_port_get_latency_range($0, mode.raw, &range) }
        return LatencyRange(range)
    }

    /// Sets this port's latency range; meaningful only inside a latency callback.
    public func setLatencyRange(_ range: LatencyRange, _ mode: LatencyMode) {
        var raw = range.raw
        _ = read { jack_port_set_latency_range($0, mode.raw, &raw) }
    }
}

/// Reads a NULL-terminated list of C strings into Swift strings, each
/// complete (see `printableName(_:)`).
func stringList(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>) -> [String] {
    var names: [String] = []
    var index = 0
    while let entry = list[index] {
        names.append(printableName(entry))
        index += 1
    }
    return names
}

/// A name from libjack as a Swift string that keeps every byte: JACK names
/// are bytes, and a client may register one that is not UTF-8. A byte that
/// does not belong to a UTF-8 character is written `\x{HH}` (the name can
/// then be shown, but not looked up again by its text).
public func printableName(_ name: UnsafePointer<CChar>) -> String {
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name))
    if let valid = String(validating: bytes, as: UTF8.self) { return valid }
    var shown = ""
    var index = 0
    while index < bytes.count {
        let character = (1...4).lazy.compactMap { length -> (String, Int)? in
            guard index + length <= bytes.count,
                  let text = String(validating: bytes[index..<(index + length)], as: UTF8.self),
                  text.unicodeScalars.count == 1 else { return nil }
            return (text, length)
        }.first
        if let (text, length) = character {
            shown += text
            index += length
        } else {
            shown += "\\x{" + String(bytes[index], radix: 16, uppercase: true) + "}"
            index += 1
        }
    }
    return shown
}
