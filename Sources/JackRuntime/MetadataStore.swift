#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CJack
import JackKit
import SystemPackage

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

        /// A lock left held (the files are whole), not a damaged file.
        public var isLock = false

        public var description: String {
            "JACK's metadata store '\(path)' is " + (isLock ? "locked (\(reason))" : "damaged (\(reason))")
        }

        /// The damage as the error an open reports.
        public var jackError: JackError {
            isLock ? .metadataStoreLocked(path: path, reason: reason) : .metadataStoreDamaged(path: path, reason: reason)
        }
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
            var using = Self.mappings(of: entry, procRoot: procRoot).contains { files.contains($0.file) }
            if !using, let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "\(procRoot)/\(entry)/fd") {
                using = descriptors.contains { descriptor in
                    var info = stat()
                    return stat("\(procRoot)/\(entry)/fd/\(descriptor)", &info) == 0
                        && files.contains(FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
                }
            }
            guard using else { return nil }
            return (pid, Self.command(of: entry, procRoot: procRoot))
        }
    }

    /// A thread of a JACK program asleep on one of the store's locks.
    public struct LockWait: Sendable, CustomStringConvertible {
        public let pid: Int32
        public let thread: Int32
        public let command: String
        /// The region file the lock lies in (`__db.001`, ...).
        public let region: String
        /// The thread that holds the lock, as glibc notes it in the mutex
        /// (nil: not a held process-shared mutex, or not readable).
        public let owner: Int32?
        /// Whether that thread no longer exists: it was killed holding the
        /// lock, which nothing will ever release.
        public let ownerIsGone: Bool

        public var description: String {
            "\(command) (pid \(pid), thread \(thread)) waits on a lock in \(region)" + Self.heldBy(owner, gone: ownerIsGone)
        }

        /// "held by thread N, …" for a lock whose owner is known.
        static func heldBy(_ owner: Int32?, gone: Bool) -> String {
            guard let owner else { return "" }
            return " held by thread \(owner)" + (gone ? ", which no longer exists" : "")
        }
    }

    /// The threads of process `pid` that sleep on a lock inside the store
    /// (a futex whose address lies in a mapping of one of its region files),
    /// from `/proc`: libdb keeps its mutexes in those files, and a program
    /// killed while it held one leaves it held for every later program. A
    /// wait seen once may be a lock another program holds for a moment; one
    /// that lasts while no other program uses the store is such a lock.
    public func lockWaits(ofProcess pid: Int32, procRoot: String = "/proc") -> [LockWait] {
        // Plain system calls, and the store's files only once a thread
        // sleeps on a futex: this runs before every checked open, on the
        // server's jackd.
        let entry = String(pid)
        let futexes = ServerProcess.entries("\(procRoot)/\(entry)/task").compactMap { thread -> (Int32, UInt64)? in
            guard let tid = Int32(thread), let address = Self.futexAddress(ofTask: "\(procRoot)/\(entry)/task/\(thread)")
            else { return nil }
            return (tid, address)
        }
        guard !futexes.isEmpty else { return [] }
        let regions = Dictionary(storeFileNames().map { ($0.file, $0.name) }, uniquingKeysWith: { first, _ in first })
        let mapped = Self.mappings(of: entry, procRoot: procRoot).filter { regions[$0.file] != nil }
        guard !mapped.isEmpty else { return [] }
        let command = Self.command(of: entry, procRoot: procRoot)
        return futexes.compactMap { tid, address in
            mapped.first { $0.range.contains(address) }.map { mapping in
                let region = regions[mapping.file] ?? "?"
                let owner = Self.mutexOwner(in: "\(path)/\(region)",
                                            at: address - mapping.range.lowerBound + mapping.fileOffset)
                return LockWait(pid: pid, thread: tid, command: command, region: region, owner: owner,
                                ownerIsGone: owner.map { !Self.threadExists($0, procRoot: procRoot) } ?? false)
            }
        }
    }

    /// The thread that holds the mutex at byte `offset` of `file` (a region
    /// file, or a process's `mem`): glibc keeps a locked mutex's owner (its
    /// thread id) in the mutex, after the lock word and the recursion
    /// count, and marks a process-shared one (libdb's, which lie in the
    /// region files) in its kind. Nil when the bytes there are not a locked
    /// process-shared mutex.
    static func mutexOwner(in file: String, at offset: UInt64) -> Int32? {
        guard let opened = try? FileDescriptor.open(file, .readOnly, options: .closeOnExec) else { return nil }
        // glibc's x86_64 and generic layouts: lock, count, owner, nusers, kind.
        var words = (Int32(0), Int32(0), Int32(0), Int32(0), Int32(0))
        let size = MemoryLayout.size(ofValue: words)
        let got = try? opened.closeAfter {
            try withUnsafeMutableBytes(of: &words) { try opened.read(fromAbsoluteOffset: Int64(truncatingIfNeeded: offset), into: $0) }
        }
        guard got == size else { return nil }
        let (lock, count, owner, _, kind) = words
        let processShared: Int32 = 128   // glibc's PTHREAD_MUTEX_PSHARED_BIT
        // Locked (1), or locked with sleepers (2); not recursive; other bytes (a condition variable's) are not read as one.
        guard lock == 1 || lock == 2, count == 0, owner > 0, kind & processShared != 0 else { return nil }
        return owner
    }

    /// Whether thread `tid` exists (any process's thread: `/proc/TID`
    /// answers for every thread, though only processes are listed).
    static func threadExists(_ tid: Int32, procRoot: String = "/proc") -> Bool {
        access("\(procRoot)/\(tid)", F_OK) == 0
    }

    /// How long a program must sleep on a lock of the store, with no other
    /// program running in it, before the lock counts as left held, seconds.
    public static let lockGrace = 2.0

    /// The store held locked for good, as seen from program `pid` (a jackd
    /// that makes no socket, a client whose open does not return): it sleeps
    /// on one of the store's locks, and goes on sleeping for `lockGrace`
    /// seconds (looked at every 0.1 s) while the lock's owner is a thread
    /// that no longer exists, or while no other program runs in the store;
    /// either way nothing that could release the lock is left. Nil at once
    /// when it does not sleep on one. This process is not counted among the
    /// programs running in the store.
    public func lockLeftHeld(asSeenBy pid: Int32, procRoot: String = "/proc") -> Damage? {
        let start = cjack_monotonic_nanoseconds()
        while true {
            let waits = lockWaits(ofProcess: pid, procRoot: procRoot)
            let ownerGone = waits.contains(where: \.ownerIsGone)
            guard !waits.isEmpty, ownerGone || runningUsers(besides: pid, procRoot: procRoot).isEmpty else { return nil }
            if Double(cjack_monotonic_nanoseconds() - start) / 1e9 >= Self.lockGrace {
                let asleep = users(procRoot: procRoot).filter { $0.pid != pid }.map { "\($0.command) (pid \($0.pid))" }
                return Damage(path: path, reason: waits.map(\.description).joined(separator: "; ")
                              + (ownerGone ? "" : " that no running program holds") + ", for \(Int(Self.lockGrace)) s"
                              + (asleep.isEmpty ? "" : "; asleep on it too: " + asleep.joined(separator: ", ")),
                              isLock: true)
            }
            usleep(100_000)
        }
    }

    /// The store held locked for good, as seen from any program using it
    /// (`lockLeftHeld(asSeenBy:)` for each): what `jas metadata-store`
    /// checks, with no server named.
    public func lockLeftHeld() -> Damage? {
        users().lazy.compactMap { lockLeftHeld(asSeenBy: $0.pid) }.first
    }

    /// What keeps the server `serverName` from the store: damaged files
    /// (`damage()`), or a lock left held that its jackd sleeps on
    /// (`lockLeftHeld`): before its request socket (making the store) or
    /// after (setting its ports' properties), and a client's open would
    /// sleep on it too.
    public func problem(forServer serverName: String) -> Damage? {
        problem(jackd: ServerProcess.find(serverName: serverName))
    }

    /// `problem(forServer:)` with the server's jackd already found.
    public func problem(jackd: ServerProcess?) -> Damage? {
        if let damage = damage() { return damage }
        return jackd.flatMap { lockLeftHeld(asSeenBy: $0.pid) }
    }

    /// The programs using the store (other than this process and `pid`)
    /// that are not asleep on one of its locks: those that may hold one.
    public func runningUsers(besides pid: Int32, procRoot: String = "/proc") -> [(pid: Int32, command: String)] {
        users(procRoot: procRoot).filter { $0.pid != pid && lockWaits(ofProcess: $0.pid, procRoot: procRoot).isEmpty }
    }

    /// A lock of a JACK metadata store that a thread of this process sleeps on.
    public struct OwnLockWait: Sendable {
        /// The region file, by its path (a store removed since is still
        /// mapped, as `… (deleted)`).
        public let region: String
        /// The thread that holds the lock (nil: not known).
        public let owner: Int32?
        /// Whether that thread no longer exists.
        public let ownerIsGone: Bool

        /// "held by thread N, which no longer exists", or nothing when the owner is not known.
        public var holder: String { LockWait.heldBy(owner, gone: ownerIsGone) }
    }

    /// The lock of a JACK metadata store that thread `tid` of this process
    /// sleeps on, or nil: a futex inside a mapping of a region file. libjack
    /// opening or closing a client opens or closes the store, and sleeps for
    /// ever on a lock a killed program left held.
    public static func lockSleptOn(byThread tid: Int32) -> OwnLockWait? {
        guard let address = futexAddress(ofTask: "/proc/self/task/\(tid)") else { return nil }
        let maps = ServerProcess.text("/proc/self/maps", limit: 4 << 20) ?? ""
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[5].contains("/jack_db-") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            if bounds.count == 2, (bounds[0]..<bounds[1]).contains(address) {
                // Read through this process's memory, not the file: the store may be removed already.
                let owner = mutexOwner(in: "/proc/self/mem", at: address)
                return OwnLockWait(region: fields[5].trimmingCharacters(in: .whitespaces), owner: owner,
                                   ownerIsGone: owner.map { !threadExists($0) } ?? false)
            }
        }
        return nil
    }

    /// The address a thread (its `/proc/.../task/TID` folder) sleeps on in
    /// `futex`, from the system call it is in; nil in any other call, or running.
    private static func futexAddress(ofTask folder: String) -> UInt64? {
        guard let call = ServerProcess.text(folder + "/syscall", limit: 256) else { return nil }
        let fields = call.split(separator: " ")
        guard fields.count > 1, Int(fields[0]) == futexSystemCall else { return nil }
        return UInt64(fields[1].dropFirst(2), radix: 16)
    }

    #if arch(x86_64)
    private static let futexSystemCall = 202
    #else
    private static let futexSystemCall = 98 // arm64's generic table
    #endif

    private static func command(of entry: String, procRoot: String) -> String {
        ServerProcess.text("\(procRoot)/\(entry)/comm", limit: 64)?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
    }

    /// The file-backed mappings of a process: address range, the offset in
    /// the file where it starts, and the file.
    private static func mappings(of entry: String, procRoot: String)
        -> [(range: Range<UInt64>, fileOffset: UInt64, file: FileIdentity)] {
        let maps = ServerProcess.text("\(procRoot)/\(entry)/maps", limit: 4 << 20) ?? ""
        return maps.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, let inode = UInt64(fields[4]), inode != 0,
                  let offset = UInt64(fields[2], radix: 16) else { return nil }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            let device = fields[3].split(separator: ":").compactMap { UInt32($0, radix: 16) }
            guard bounds.count == 2, bounds[0] < bounds[1], device.count == 2 else { return nil }
            return (bounds[0]..<bounds[1], offset,
                    FileIdentity(device: deviceNumber(major: device[0], minor: device[1]), inode: inode))
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
    private func storeFiles() -> Set<FileIdentity> { Set(storeFileNames().map(\.file)) }

    private func storeFileNames() -> [(name: String, file: FileIdentity)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.compactMap { name in
            var info = stat()
            guard stat("\(path)/\(name)", &info) == 0 else { return nil }
            return (name, FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
        }
    }

    /// Removes the store's folder and everything in it (JACK makes it anew at the next open).
    public func remove() throws {
        try FileManager.default.removeItem(atPath: path)
    }
}
