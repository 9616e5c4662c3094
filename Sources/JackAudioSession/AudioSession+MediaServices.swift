import Foundation
import JackKit
import JackRuntime

/// What to do when the JACK server comes back after a loss.
public enum ResetPolicy: Sendable {
    /// Rebuild and reactivate at once (the default for headless tools).
    case automatic
    /// Rebuild the client, but leave activation to the app, as on iOS.
    case manual
}

/// What a media-services reset found: the new server may run another rate or period.
public struct MediaServicesReset: Sendable, Equatable {
    /// Sample rate before the loss and now, Hz.
    public let previousSampleRate: Double
    /// Sample rate now, Hz.
    public let sampleRate: Double
    /// Period before the loss and now, frames (now: after the session's own request).
    public let previousIOBufferFrames: Int
    /// Period now, frames.
    public let ioBufferFrames: Int
    /// Whether the session is active again (automatic policy and it was active).
    public let reactivated: Bool
    /// Seconds from the loss to the reset.
    public let downtime: Double
}

extension AudioSession {
    /// Why libjack is stuck in this process (nil: it is not). Once it is, no
    /// session in the process can reach a server again: restart the program.
    public var libraryWedgedReason: String? { ClientLifecycle.shared.wedgedReason }

    /// Whether the process is stuck because JACK's server registry
    /// (`/dev/shm/jack-shm-registry`) was removed or replaced since libjack
    /// attached it: removed while no jackd ran (`rm /dev/shm/jack*`,
    /// systemd-logind's `RemoveIPC=yes`), then made anew by the next jackd.
    /// libjack attaches the registry once per process, so every later open
    /// fails; the session says it once (`mediaServicesWereLost`, its reason
    /// naming the registry) and stops reconnecting. The cure is a new
    /// process: re-execute the program with its arguments (as `jas` does) or
    /// exit and let a supervisor start it again.
    public var serverRegistryWasReplaced: Bool { ClientLifecycle.shared.registryReplacedReason != nil }

    /// Waits until a JACK client can be opened on `serverName`, never
    /// starting a server, at the reconnect's pace (50 ms doubling to 1 s,
    /// woken early when the server's socket appears); each attempt opens and
    /// closes a client named `probeName`. False once `limit` seconds passed.
    @discardableResult
    public static func waitForServer(_ serverName: String, probeName: String = "jackaudiosession-probe",
                                     limit: Double? = nil) -> Bool {
        let watch = ServerWatch(serverName: serverName)
        var backoff = ReconnectBackoff()
        let started = ContinuousClock.now
        while (try? Client.checkedOpen(name: probeName, serverName: serverName))?.close() == nil {
            if let limit, (ContinuousClock.now - started).inSeconds >= limit { return false }
            backoff.pause(on: watch, serverName: serverName)
        }
        return true
    }
}
