import CWakeup
import JackKit
import Foundation
import JackRuntime
import SystemPackage

/// Waits for a JACK server to come back: jackd2 creates its request socket
/// `/dev/shm/jack_NAME_UID_0` when it starts, so an inotify watch on the
/// folder wakes the reconnect loop as soon as the server is there instead of
/// at the end of a backoff step (without inotify, the step runs to its end).
/// `interrupt()` ends a wait at once: the session's close stops its
/// reconnect loop with it instead of after the pause.
final class ServerWatch: Sendable {
    /// The inotify watch on the server folder (nil: none).
    private let watch: FileDescriptor?
    /// An eventfd that `interrupt()` writes (nil: none).
    private let interruption: FileDescriptor?
    private let socketName: String
    static let folder = ServerProcess.serverFolder

    /// How a wait ended.
    enum Outcome: Equatable {
        /// The server's request socket appeared.
        case serverAppeared
        /// The pause ran its course.
        case timedOut
        /// `interrupt()` was called.
        case interrupted
    }

    init(serverName: String) {
        socketName = ServerProcess.requestSocketName(serverName: serverName)
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        watch = inotify >= 0 ? FileDescriptor(rawValue: inotify) : nil
        if let watch { _ = inotify_add_watch(watch.rawValue, Self.folder, UInt32(IN_CREATE | IN_MOVED_TO)) }
        let eventfd = cwakeup_eventfd()
        interruption = eventfd >= 0 ? FileDescriptor(rawValue: eventfd) : nil
    }

    deinit {
        try? watch?.close()
        try? interruption?.close()
    }

    /// From any thread: ends the wait under way, and every later one, at once.
    func interrupt() {
        guard let interruption else { return }
        _ = try? withUnsafeBytes(of: UInt64(1)) { try interruption.write($0) }
    }

    /// Waits up to `seconds` for the server's socket to appear, or an interruption.
    func wait(seconds: Double) -> Outcome {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var watched = [pollfd(fd: watch?.rawValue ?? -1, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: interruption?.rawValue ?? -1, events: Int16(POLLIN), revents: 0)]
        while true {
            let remaining = (deadline - ContinuousClock.now).inSeconds
            guard remaining > 0 else { return .timedOut }
            // poll skips an entry whose descriptor is negative.
            guard poll(&watched, nfds_t(watched.count), Int32(remaining * 1000) + 1) > 0 else { continue }
            if watched[1].revents != 0 { return .interrupted }
            guard let watch, let count = try? buffer.withUnsafeMutableBytes({ try watch.read(into: $0) }), count > 0 else {
                continue
            }
            if InotifyEvents.parse(buffer.prefix(count)).contains(where: { $0.name == socketName }) {
                StepTrace.note("server watch: \(socketName) appeared")
                return .serverAppeared
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

    /// Waits before the next attempt to reach `serverName`, on `watch`;
    /// how the wait ended.
    @discardableResult
    mutating func pause(on watch: ServerWatch, serverName: String) -> ServerWatch.Outcome {
        let starting = ServerProcess.requestSocketExists(serverName: serverName)
            && ServerProcess.serving(serverName: serverName) != nil
        let next = nextPause(serverStarting: starting, now: Double(MonotonicClock.nanoseconds) / 1e9)
        StepTrace.note("reconnect: pausing \(next.seconds) s" + (next.paced ? " (the server is starting)" : ""))
        let outcome = watch.wait(seconds: next.seconds)
        if !next.paced { paused(woken: outcome == .serverAppeared) }
        return outcome
    }
}
