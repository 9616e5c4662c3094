import Foundation
import Glibc
import Recording
import SystemPackage

/// systemd's notify protocol (sd_notify(3)) for a unit of `Type=notify`:
/// datagrams of `KEY=VALUE` lines to the socket named in `$NOTIFY_SOCKET`
/// (a path, or `@name` in the abstract namespace). Nothing without it.
final class ServiceNotifier: @unchecked Sendable { // its socket is written by one thread at a time (the recorder's loop)
    private let socket: FileDescriptor
    private var address = sockaddr_un()
    private let addressLength: socklen_t
    /// How often the watchdog wants a ping (half of `$WATCHDOG_USEC`), if it does.
    let watchdogInterval: Double?

    init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let socketPath = environment["NOTIFY_SOCKET"], !socketPath.isEmpty else { return nil }
        var bytes = Array(socketPath.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return nil }
        let opened = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard opened >= 0 else { return nil }
        socket = FileDescriptor(rawValue: opened)
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
        // systemd sets WATCHDOG_PID to the process it watches: another process's settings are not ours.
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        watchdogInterval = forUs ? environment["WATCHDOG_USEC"].flatMap(Double.init).map { $0 / 2e6 } : nil
    }

    deinit { try? socket.close() }

    /// Sends `fields` as one datagram (`READY=1`, `WATCHDOG=1`, `STATUS=...`).
    func send(_ fields: [String]) {
        let text = Array(fields.joined(separator: "\n").utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                text.withUnsafeBytes { sendto(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, addressLength) }
            }
        }
    }
}

/// What `jas record` tells systemd: READY once the take is recording (or
/// armed, waiting for its trigger), a watchdog ping whenever the disk
/// thread has moved since the last (a writer stuck in a write stops them,
/// a slow one does not), and a STATUS line with the file, level and gaps.
final class RecordServiceReport: @unchecked Sendable { // driven from the record loop only
    private let notifier: ServiceNotifier
    private var ready = false
    private var lastBeat: UInt64 = .max
    /// When the last ping went, on the monotonic clock (a wall-clock step
    /// back must not hold the pings back, nor systemd then kill the logger).
    private var lastPing: ContinuousClock.Instant?
    private var lastStatus = ""

    init?(notifier: ServiceNotifier?) {
        guard let notifier else { return nil }
        self.notifier = notifier
    }

    func update(_ progress: RecordingProgress, armed: Bool, diskBeats: UInt64) {
        var fields: [String] = []
        if !ready && (progress.isRecording || armed) {
            ready = true
            fields.append("READY=1")
        }
        let interval = notifier.watchdogInterval ?? 1
        let now = ContinuousClock.now
        if ready, diskBeats != lastBeat, lastPing.map({ now - $0 >= .seconds(min(interval, 1)) }) ?? true {
            lastBeat = diskBeats
            lastPing = now
            fields.append("WATCHDOG=1")
        }
        let peak = progress.peakDBFS.max() ?? -.infinity
        let status = (progress.serverLost ? "waiting for the JACK server; " : progress.isRecording ? "recording " : "armed; ")
            + ((progress.path as NSString?)?.lastPathComponent ?? "") + "; peak "
            + (peak.isFinite ? String(format: "%.1f dBFS", peak) : "-inf") + "; gaps \(progress.gaps)"
        if status != lastStatus || !fields.isEmpty {
            lastStatus = status
            fields.append("STATUS=" + status)
        }
        if !fields.isEmpty { notifier.send(fields) }
    }

    func stopping() { notifier.send(["STOPPING=1", "STATUS=stopping"]) }
}
