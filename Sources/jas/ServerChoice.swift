import JackAudioSession
import Foundation
import LoopbackHarness

/// The server a command works on: the running one named with `--server`, or
/// a private headless jackd (dummy backend, loopback ports) started for the
/// command, stopped by PID when the command ends (also on Ctrl-C). The
/// private server runs real-time where the user may (`-R`): a measurement
/// an xrun spoils is measured again, and fewer xruns mean fewer retries.
final class ServerChoice {
    let name: String
    private let spawned: LoopbackServer?

    var isPrivate: Bool { spawned != nil }

    init(server: String?, command: String, period: Int, loopbackChannels: Int = 2, quiet: Bool) throws {
        if let server {
            name = server
            spawned = nil
        } else {
            if !quiet { Output.line("starting a private jackd (dummy backend, loopback ports, \(period) frames, real-time where allowed)…") }
            let privateServer = try LoopbackServer(name: "jas-\(command)-\(getpid())", loopbackChannels: loopbackChannels,
                                                   period: period, realtime: true)
            spawned = privateServer
            name = privateServer.name
            // Ctrl-C stops it too (after the command's own cleanups, registered later).
            Signals.onInterrupt { privateServer.stop() }
        }
    }

    deinit {
        guard let spawned else { return }
        spawned.stop()
        // Its session registry folder, once empty: the name is never used again.
        rmdir(SessionRegistry(serverName: name).directory)
    }
}
