import JackKit
import Foundation
import JackRuntime

/// Waits for a JACK server to come back: jackd2 creates its request socket
/// `/dev/shm/jack_NAME_UID_0` when it starts, so an inotify watch on the
/// folder wakes the reconnect loop as soon as the server is there instead of
/// at the end of a backoff step. Without inotify it is a plain sleep.
final class ServerWatch {
    private let descriptor: Int32
    private let socketName: String
    static let folder = ServerProcess.serverFolder

    init(serverName: String) {
        socketName = ServerProcess.requestSocketName(serverName: serverName)
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if descriptor >= 0 {
            _ = inotify_add_watch(descriptor, Self.folder, UInt32(IN_CREATE | IN_MOVED_TO))
        }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Sleeps up to `seconds`; returns early (true) when the server's socket appears.
    func wait(seconds: Double) -> Bool {
        guard descriptor >= 0 else {
            usleep(UInt32(seconds * 1_000_000))
            return false
        }
        let deadline = ContinuousClock.now + .seconds(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let remaining = (deadline - ContinuousClock.now).inSeconds
            guard remaining > 0 else { return false }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(remaining * 1000) + 1) > 0 else { continue }
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { continue }
            if InotifyEvents.parse(buffer.prefix(count)).contains(where: { $0.name == socketName }) {
                StepTrace.note("server watch: \(socketName) appeared")
                return true
            }
        }
    }
}

/// The pace of looking for a server that went away: 50 ms doubling to 1 s
/// between attempts, 10 ms after its socket appeared; and while its jackd
/// is starting (its socket there and its process running, but no client
/// taken yet: under load that took 0.6 s), every 20 ms for up to 3 s, so a
/// doubled delay never sleeps past the moment it is ready. The reconnect
/// loop and `waitForServer` share it.
struct ReconnectBackoff {
    private(set) var delay = 0.05
    /// When the server was first seen starting, monotonic seconds.
    private var startingSince: Double?
    static let startingPace = 0.02
    static let startingWindow = 3.0

    /// The next pause, seconds, at monotonic time `now`; `paced`: the
    /// starting server's pace (the delay does not grow).
    mutating func nextPause(serverStarting: Bool, now: Double) -> (seconds: Double, paced: Bool) {
        guard serverStarting else {
            startingSince = nil
            return (delay, false)
        }
        let since = startingSince ?? now
        startingSince = since
        return now - since < Self.startingWindow ? (Self.startingPace, true) : (delay, false)
    }

    /// After a pause of the delay: cut short by the socket's appearance (`woken`) or not.
    mutating func paused(woken: Bool) {
        delay = woken ? 0.01 : min(delay * 2, 1)
    }

    /// Waits before the next attempt to reach `serverName`, on `watch`.
    mutating func pause(on watch: ServerWatch, serverName: String) {
        let starting = ServerProcess.requestSocketExists(serverName: serverName)
            && ServerProcess.serving(serverName: serverName) != nil
        let next = nextPause(serverStarting: starting, now: Double(MonotonicClock.nanoseconds) / 1e9)
        StepTrace.note("reconnect: pausing \(next.seconds) s" + (next.paced ? " (the server is starting)" : ""))
        let woken = watch.wait(seconds: next.seconds)
        if !next.paced { paused(woken: woken) }
    }
}
