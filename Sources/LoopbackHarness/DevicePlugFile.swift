import JackAudioSession
import Foundation
import Synchronization

/// Which process keeps a simulated device plugged into a server: one file per
/// server and device, in a folder private to the user next to the session
/// registry (names escaped, so that none climbs out of it), holding the
/// process's PID and locked (`flock`) by it for as long as it runs.
///
/// The lock, not the file's text, says who plugged the device: `unplug`
/// signals only the process the kernel lists as holding the lock
/// (`/proc/locks`), so a file left by a killed plug, or planted by anyone,
/// gets nobody signalled.
public enum DevicePlugFile {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The folder or the file cannot be made or opened.
        case unusable(path: String, reason: String)
        /// Another process keeps the device plugged.
        case alreadyPlugged(device: String, server: String, pid: String)
        /// No file: nothing was plugged by this means.
        case notPlugged(device: String, server: String, path: String)
        /// A file nobody holds (its process is gone): it was removed.
        case stale(device: String, path: String)
        /// The file's PID is not the process that holds its lock: nothing was signalled.
        case notTheHolder(device: String, path: String)
        /// The holder could not be signalled.
        case cannotSignal(device: String, pid: pid_t, reason: String)

        public var description: String {
            switch self {
            case let .unusable(path, reason):
                "cannot use \(path): \(reason)"
            case let .alreadyPlugged(device, server, pid):
                "'\(device)' is already plugged into '\(server)' by pid \(pid); unplug it first "
                    + "(jas device unplug \(device) --server \(server))"
            case let .notPlugged(device, server, path):
                "no device '\(device)' plugged into '\(server)' by jas (no \(path))"
            case let .stale(device, path):
                "'\(device)' is not plugged any more (its process is gone); removed its stale \(path)"
            case let .notTheHolder(device, path):
                "\(path) does not name the process that plugged '\(device)'; nothing was signalled"
            case let .cannotSignal(device, pid, reason):
                "the process of '\(device)' (pid \(pid)) could not be signalled: \(reason)"
            }
        }
    }

    /// The file of `device` on `server` (its folder made, private, when missing).
    public static func path(server: String, device: String) throws(Failure) -> String {
        let registry = SessionRegistry(serverName: server)
        do {
            try registry.prepare()
        } catch {
            throw .unusable(path: registry.base, reason: "\(error)")
        }
        let folder = registry.base + "/devices-" + SessionRegistry.folderName(forServer: server)
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw .unusable(path: folder, reason: String(cString: strerror(errno)))
        }
        return folder + "/" + SessionRegistry.folderName(forServer: device) + ".pid"
    }

    /// This process's hold on a device's file: taken before the device is
    /// plugged (a second plug of the name is refused instead of taking the
    /// first one's file), released when the device is unplugged.
    public final class Claim: Sendable {
        public let path: String
        private let descriptor: Int32

        public init(server: String, device: String) throws(Failure) {
            path = try DevicePlugFile.path(server: server, device: device)
            descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { throw .unusable(path: path, reason: String(cString: strerror(errno))) }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let holder = (try? String(contentsOfFile: path, encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                close(descriptor)
                throw .alreadyPlugged(device: device, server: server, pid: holder ?? "?")
            }
            let pid = Array("\(getpid())\n".utf8)
            _ = ftruncate(descriptor, 0)
            _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }

        /// Removes the file and lets go of it (the device is unplugged); once:
        /// a second call would close a descriptor the process reused meanwhile.
        public func release() {
            guard released.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
            else { return }
            unlink(path)
            close(descriptor)
        }

        private let released = Atomic<Bool>(false)
    }

    /// Ends the process that keeps `device` plugged into `server` (SIGTERM)
    /// and waits at most `seconds` for it to go; its PID.
    @discardableResult
    public static func unplug(server: String, device: String, within seconds: Double = 5) throws(Failure) -> pid_t {
        let path = try path(server: server, device: device)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw .notPlugged(device: device, server: server, path: path) }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_SH | LOCK_NB) != 0 else {
            unlink(path)
            throw .stale(device: device, path: path)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, let holder = lockHolder(of: info),
              let text = try? String(contentsOfFile: path, encoding: .utf8),
              pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) == holder else {
            throw .notTheHolder(device: device, path: path)
        }
        guard kill(holder, SIGTERM) == 0 else {
            throw .cannotSignal(device: device, pid: holder, reason: String(cString: strerror(errno)))
        }
        // Gone once its lock is: the kernel drops it when the process ends.
        let deadline = ContinuousClock.now + .seconds(seconds)
        while lockHolder(of: info) == holder && ContinuousClock.now < deadline { usleep(10_000) }
        return holder
    }

    /// The process holding a `flock` on the file `info` describes, as the kernel lists it in `/proc/locks`.
    static func lockHolder(of info: stat) -> pid_t? {
        guard let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        let file = String(format: "%02llx:%02llx:%llu", major, minor, UInt64(info.st_ino))
        for line in table.split(separator: "\n") {
            // "1: FLOCK  ADVISORY  WRITE 8659 00:1b:177103 0 EOF"; a waiter's line has "->" after the number.
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == file else { continue }
            return pid_t(fields[4])
        }
        return nil
    }
}
