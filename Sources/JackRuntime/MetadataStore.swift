#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JackKit

/// JACK's metadata store as it lies on disk: the Berkeley DB environment that
/// libjack opens in every process that opens a client, and jackd at start,
/// in `/dev/shm/jack_db-UID` (one per user, shared by all the user's servers).
///
/// A region file of that environment left empty (`__db.002` of length 0
/// beside a whole `__db.001`, seen after a soak of killed servers) makes
/// libdb touch memory past the file's end: every JACK program of the user,
/// jackd included, then dies of SIGBUS at start, until the folder is removed
/// (JACK makes it anew). Nothing in libjack checks for it, so this does,
/// from file sizes alone, without opening the environment.
public struct MetadataStore: Sendable {
    /// The environment's folder.
    public let path: String

    /// The store of user `uid` under `root` (jack2's server folder on Linux).
    public init(root: String = "/dev/shm", uid: uid_t = getuid()) {
        path = "\(root)/jack_db-\(uid)"
    }

    /// What makes the store unusable.
    public struct Damage: Error, Sendable, Equatable, CustomStringConvertible {
        public let path: String
        /// The files and what is wrong with each.
        public let reason: String

        public var description: String { "JACK's metadata store '\(path)' is damaged (\(reason))" }

        /// The damage as the error an open reports.
        public var jackError: JackError { .metadataStoreDamaged(path: path, reason: reason) }
    }

    /// Seconds an empty region file may be young before it counts as damage:
    /// libdb creates each region file empty and sizes it at once.
    public static let creationGrace = 2.0

    /// Why the store would crash a JACK program that opened it; nil when it
    /// is whole or absent. An empty region file younger than `creationGrace`
    /// may be one libdb is making: looked at again every 0.1 s until it is
    /// sized (normally at once) or that old.
    public func damage() -> Damage? {
        // Bounded by the monotonic clock too: a file time in the future (the
        // wall clock was set back) must not hold an open up.
        var waited = 0.0
        while true {
            let empty = regions().filter { $0.size == 0 }
            guard !empty.isEmpty else { return nil }
            if waited >= Self.creationGrace || empty.allSatisfy({ $0.age >= Self.creationGrace }) {
                let whole = regions().filter { $0.size > 0 }
                let beside = whole.isEmpty ? "" : " beside " + whole.map { "\($0.name) (\($0.size) bytes)" }.joined(separator: ", ")
                return Damage(path: path, reason: empty.map(\.name).joined(separator: ", ")
                              + (empty.count == 1 ? " is empty" : " are empty") + beside)
            }
            usleep(100_000)
            waited += 0.1
        }
    }

    private struct Region {
        let name: String
        let size: Int64
        let age: Double
    }

    private func regions() -> [Region] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return names.filter { $0.hasPrefix("__db.") }.sorted().compactMap { name in
            var info = stat()
            guard stat("\(path)/\(name)", &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            let age = Double(now.tv_sec - info.st_mtim.tv_sec) + Double(now.tv_nsec - info.st_mtim.tv_nsec) / 1e9
            return Region(name: name, size: Int64(info.st_size), age: age)
        }
    }

    /// The processes that have the store's files mapped or open: the JACK
    /// programs that use it now (jackd, clients), from `/proc`. Files are
    /// told by device and inode, not by name: another mount namespace's
    /// `/dev/shm/jack_db-UID` is another store.
    public func users(procRoot: String = "/proc") -> [(pid: Int32, command: String)] {
        let files = storeFiles()
        guard !files.isEmpty, let entries = try? FileManager.default.contentsOfDirectory(atPath: procRoot) else { return [] }
        return entries.compactMap { entry -> (Int32, String)? in
            guard let pid = Int32(entry), pid != getpid() else { return nil }
            let maps = (try? String(contentsOfFile: "\(procRoot)/\(entry)/maps", encoding: .utf8)) ?? ""
            var using = maps.split(separator: "\n").contains { line in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 6, let inode = UInt64(fields[4]), inode != 0 else { return false }
                let device = fields[3].split(separator: ":").compactMap { UInt32($0, radix: 16) }
                guard device.count == 2 else { return false }
                return files.contains(FileIdentity(device: Self.deviceNumber(major: device[0], minor: device[1]), inode: inode))
            }
            if !using, let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "\(procRoot)/\(entry)/fd") {
                using = descriptors.contains { descriptor in
                    var info = stat()
                    return stat("\(procRoot)/\(entry)/fd/\(descriptor)", &info) == 0
                        && files.contains(FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
                }
            }
            guard using else { return nil }
            let command = (try? String(contentsOfFile: "\(procRoot)/\(entry)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            return (pid, command)
        }
    }

    /// glibc's dev_t from a major and minor number (its makedev, a macro Swift does not see).
    private static func deviceNumber(major: UInt32, minor: UInt32) -> UInt64 {
        let major = UInt64(major), minor = UInt64(minor)
        return (major & 0xFFFF_F000) << 32 | (major & 0x0000_0FFF) << 8 | (minor & 0xFFFF_FF00) << 12 | (minor & 0x0000_00FF)
    }

    private struct FileIdentity: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    /// The device and inode of every file in the store.
    private func storeFiles() -> Set<FileIdentity> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return Set(names.compactMap { name in
            var info = stat()
            guard stat("\(path)/\(name)", &info) == 0 else { return nil }
            return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        })
    }

    /// Removes the store's folder and everything in it (JACK makes it anew at the next open).
    public func remove() throws {
        try FileManager.default.removeItem(atPath: path)
    }
}
