#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JackKit
import JackRuntime

/// What a JACK server is, as far as one of its clients can tell: which
/// implementation, which driver makes its `system:` ports, and for a netjack2
/// slave, its master and the network's latency.
///
/// The driver comes from the hardware ports' aliases (jack2's drivers name
/// them `DRIVER_pcm:…`: `alsa_pcm`, `dummy_pcm`, `net_pcm`), the network
/// latency from the ranges the net driver gives its ports (capture: `-l`
/// periods / 2; playback: the same plus one period in async mode). What no
/// JACK call tells (the master's address, the slave's name on the network)
/// comes from the server's process when this machine shows it: its command
/// line and its connected UDP socket.
public struct ServerDescription: Encodable, Sendable, Equatable {
    /// "jackd2", "PipeWire", or "unknown" when neither the library nor a process says.
    public let implementation: String
    /// The server's version: PipeWire's, from its libjack's version string
    /// ("3.0.0.0 (using PipeWire 0.3.65)"); jackd2's libjack comes with its
    /// jackd, so theirs is the same. Nil when neither is known.
    public let serverVersion: String?
    /// What libjack says of itself (`jack_get_version_string`).
    public let libraryVersion: String
    /// The driver behind the `system:` ports ("alsa", "dummy", "net", …); nil without such ports.
    public let driver: String?
    /// The server's process on this machine, when found.
    public let pid: Int32?
    /// Set when the server is a netjack2 slave.
    public let netjack: NetJackSlave?
    /// What the server lacks that jackd2 has (empty on jackd2).
    public let limitations: [ServerLimitation]

    /// A netjack2 slave's link to its master.
    public struct NetJackSlave: Encodable, Sendable, Equatable {
        /// The master's IP address, from the slave's connected UDP socket
        /// (else the address it was told with `-a`, unless that is multicast);
        /// nil when neither is readable.
        public let master: String?
        /// The slave's name on the network (its client on the master), from `-n`; nil when not given.
        public let name: String?
        /// The network latency the slave runs with, in periods (`-l`).
        public let networkLatencyPeriods: Int
        /// "async" (the default: the playback side adds one more period) or "sync".
        public let mode: String
        /// What the slave's ports report for the round trip: capture + playback latency, frames.
        public let roundTripFrames: Int
    }

    /// Describes the server `client` is connected to.
    public init(_ client: Client) {
        libraryVersion = LibraryVersion.text
        let process = ServerProcess.find(serverName: client.serverName)
        pid = process?.pid
        if let range = libraryVersion.range(of: "PipeWire ") {
            implementation = "PipeWire"
            serverVersion = String(libraryVersion[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        } else if process != nil {
            implementation = "jackd2"
            serverVersion = libraryVersion
        } else {
            implementation = "unknown"
            serverVersion = nil
        }
        limitations = ServerLimitation.found(on: client)
        let capture = client.ports(matching: "^system:", flags: [.physical, .output]).first
        let playback = client.ports(matching: "^system:", flags: [.physical, .input]).first
        driver = (capture ?? playback).flatMap { Self.driver(fromAliases: $0.aliases) }
        guard driver == "net", let capture, let playback, client.bufferSize > 0 else {
            netjack = nil
            return
        }
        let captureFrames = capture.latencyRange(.capture).max
        let playbackFrames = playback.latencyRange(.playback).max
        netjack = NetJackSlave(
            master: process?.netMasterAddress, name: process?.driverOption(["-n", "--client-name"]),
            networkLatencyPeriods: Int((Double(2 * captureFrames) / Double(client.bufferSize)).rounded()),
            mode: playbackFrames - captureFrames == client.bufferSize ? "async" : "sync",
            roundTripFrames: captureFrames + playbackFrames)
    }

    /// What makes the port `name` on the server `client` is connected to:
    /// "alsa", "firewire", "net", "dummy" for a jack2 driver's port,
    /// "loopback" for jackd's `-L` ports, else the owning client's name
    /// ("client 'NAME'"); nil when no such port exists.
    public static func source(ofPort name: String, on client: Client) -> String? {
        guard let port = client.port(named: name) else { return nil }
        if let driver = driver(fromAliases: port.aliases) { return driver }
        if port.aliases.contains(where: { $0.hasPrefix("loopback:loopback:") }) { return "loopback" }
        return "client '\(name.split(separator: ":").first ?? Substring(name))'"
    }

    /// Whether `source` (as `source(ofPort:on:)` says it) is software that
    /// plays its input back, not a converter: calibrating such a path measures jackd, not a sound card.
    public static func isSoftwareLoopback(_ source: String) -> Bool { source == "dummy" || source == "loopback" }

    /// "net" from "net_pcm:from_master_:out1": jack2's drivers alias their ports `DRIVER_pcm:…`.
    static func driver(fromAliases aliases: [String]) -> String? {
        for alias in aliases {
            guard let prefix = alias.split(separator: ":").first, prefix.hasSuffix("_pcm") else { continue }
            return String(prefix.dropLast(4))
        }
        return nil
    }
}

extension ServerProcess {
    /// The master's address: the remote end of the slave's connected UDP
    /// socket, else `-a` when it is not a multicast address.
    var netMasterAddress: String? {
        if let connected = Self.connectedUDPPeer(pid: pid) { return connected }
        guard let given = driverOption(["-a", "--multicast-ip"]) else { return nil }
        let first = Int(given.split(separator: ".").first ?? "") ?? 0
        return (224...239).contains(first) ? nil : given
    }

    /// The peer address of the first connected UDP socket `pid` holds, from
    /// its `/proc/PID/fd` and `/proc/PID/net/udp` (its network namespace).
    static func connectedUDPPeer(pid: Int32, procRoot: String = "/proc") -> String? {
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "\(procRoot)/\(pid)/fd") else { return nil }
        let inodes = Set(descriptors.compactMap { descriptor -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(procRoot)/\(pid)/fd/\(descriptor)"),
                  target.hasPrefix("socket:[") else { return nil }
            return String(target.dropFirst(8).dropLast())
        })
        guard let table = try? String(contentsOfFile: "\(procRoot)/\(pid)/net/udp", encoding: .utf8) else { return nil }
        return connectedPeer(udpTable: table, socketInodes: inodes)
    }

    /// In a `/proc/net/udp` table, the remote address of the first row in
    /// state 01 (established) whose inode is one of `socketInodes`.
    static func connectedPeer(udpTable: String, socketInodes: Set<String>) -> String? {
        for row in udpTable.split(separator: "\n").dropFirst() {
            let fields = row.split(separator: " ")
            guard fields.count > 9, fields[3] == "01", socketInodes.contains(String(fields[9])),
                  let remote = fields[2].split(separator: ":").first, remote.count == 8,
                  let raw = UInt32(remote, radix: 16) else { continue }
            // The kernel prints the address as the 32-bit number in host order (little-endian here).
            let bytes = withUnsafeBytes(of: raw.littleEndian) { Array($0) }
            return bytes.map(String.init).joined(separator: ".")
        }
        return nil
    }

}
