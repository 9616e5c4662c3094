import Foundation
import JackKit

/// Which JACK ports a recording or a meter captures: shell wildcards (`system:capture_*`)
/// matched against the server's audio output ports, in pattern order and then
/// the server's order, each port once.
public enum PortSelection {
    /// The ports matching `patterns`; with no patterns, the first `channels`
    /// (default 2) physical capture ports. `channels` also limits a match.
    public static func resolve(_ patterns: [String], channels: Int?, on client: Client) throws(CaptureError) -> [String] {
        let sources = client.portNames(flags: .output)
        var chosen: [String] = []
        if patterns.isEmpty {
            chosen = client.portNames(flags: [.output, .physical])
            if chosen.isEmpty {
                throw .noSuchPort(pattern: "(physical capture ports)", server: client.serverName, available: sources)
            }
            if let channels, channels > chosen.count { throw .tooFewPorts(channels: channels, matched: chosen) }
            return Array(chosen.prefix(channels ?? 2))
        }
        for pattern in patterns {
            let matches = sources.filter { fnmatch(pattern, $0, 0) == 0 }
            guard !matches.isEmpty else {
                throw .noSuchPort(pattern: pattern, server: client.serverName, available: sources)
            }
            for name in matches where !chosen.contains(name) { chosen.append(name) }
        }
        if let channels {
            guard channels <= chosen.count else {
                throw .tooFewPorts(channels: channels, matched: chosen)
            }
            chosen = Array(chosen.prefix(channels))
        }
        return chosen
    }
}
