import JackKit
import Foundation

/// Waits for a JACK server to come back: jackd2 creates its request socket
/// `/dev/shm/jack_NAME_UID_0` when it starts, so an inotify watch on the
/// folder wakes the reconnect loop as soon as the server is there instead of
/// at the end of a backoff step. Without inotify it is a plain sleep.
final class ServerWatch {
    private let descriptor: Int32
    private let socketName: String
    static let folder = JackKit.ServerProcess.serverFolder

    init(serverName: String) {
        socketName = JackKit.ServerProcess.requestSocketName(serverName: serverName)
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
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let remaining = deadline.timeIntervalSinceNow
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
/// between attempts, and 10 ms once its socket appeared (it may need a
/// moment to accept clients). The reconnect loop and `waitForServer` share it.
struct ReconnectBackoff {
    private(set) var delay = 0.05

    /// Waits the current delay on `watch`, then sets the next one.
    mutating func pause(on watch: ServerWatch) {
        delay = watch.wait(seconds: delay) ? 0.01 : min(delay * 2, 1)
    }
}
