import Foundation
import JackRuntime
import Synchronization
import SystemPackage

/// Where the sessions of one JACK server find each other: a folder per server
/// name, one file per session, under `/dev/shm/jackaudiosession-UID/` (or
/// `$JACKAUDIOSESSION_REGISTRY`).
///
/// * A session writes its state atomically (a new file, then `rename`), and
///   holds an exclusive `flock` on the file it published for as long as it
///   lives. A process that dies, SIGKILL included, drops the lock with it, so a
///   reader that finds a file unlocked knows its session is gone, and removes it.
/// * A restarted server of the same name finds the same folder; servers of
///   other names never see each other's sessions.
/// * `/dev/shm` is where libjack finds the server itself (its sockets), for
///   every process of the user whatever its environment: a systemd service
///   without `$XDG_RUNTIME_DIR` and a login shell with it reach the same jackd,
///   so they must reach the same registry.
/// * Nothing here goes through jackd or its metadata store, so a wedged or
///   broken store (see JACK-NOTES.md) cannot silence arbitration.
public struct SessionRegistry: Sendable {
    /// The folder of this server's sessions.
    public let directory: String
    /// The folder that holds every server's folder.
    public let base: String
    /// The JACK server whose sessions the registry holds.
    public let serverName: String

    /// Files of more bytes are never read (a state is at most `SessionState.maximumLength`).
    static let maximumFileSize = SessionState.maximumLength
    static let suffix = ".json"

    /// The registry of `serverName`'s sessions, under `base`.
    public init(serverName: String, base: String = SessionRegistry.baseDirectory) {
        self.serverName = serverName
        self.base = base
        directory = base + "/" + Self.folderName(forServer: serverName)
    }

    /// `$JACKAUDIOSESSION_REGISTRY` when it is an absolute path, else
    /// `/dev/shm/jackaudiosession-UID`, else (no `/dev/shm`)
    /// `/tmp/jackaudiosession-UID`. Created private to the user; refused when
    /// it exists and others could write it.
    public static var baseDirectory: String {
        if let chosen = ProcessInfo.processInfo.environment["JACKAUDIOSESSION_REGISTRY"], chosen.hasPrefix("/") {
            return chosen
        }
        var info = stat()
        let shared = stat("/dev/shm", &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR ? "/dev/shm" : "/tmp"
        return "\(shared)/jackaudiosession-\(getuid())"
    }

    /// A server name as one safe folder name: letters, digits, `.`, `_` and
    /// `-` as they are, every other byte as `%XX` (so `a/b` and `a%2Fb` differ,
    /// and `.` or `..` cannot climb out).
    public static func folderName(forServer name: String) -> String {
        var folder = ""
        for byte in name.utf8 {
            let scalar = Unicode.Scalar(byte)
            if byte < 0x80, CharacterSet.alphanumerics.contains(scalar) || "_-".unicodeScalars.contains(scalar) {
                folder.unicodeScalars.append(scalar)
            } else if byte == UInt8(ascii: "."), !folder.isEmpty {
                folder.append(".")
            } else {
                folder += String(format: "%%%02X", byte)
            }
        }
        return folder.isEmpty ? "%" : folder
    }

    /// Why the registry could not be used, naming the folder and what to do.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Creates the folder (and the base, private to the user) if need be.
    public func prepare() throws(Failure) {
        for (path, isBase) in [(base, true), (directory, false)] {
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw Failure(description: "cannot create the session registry folder \(path): "
                              + "\(String(cString: strerror(errno))); check that its parent is writable")
            }
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw Failure(description: "the session registry \(path) is not a folder; remove it")
            }
            // In /dev/shm or /tmp anybody could have made the base: it must be ours and private.
            if isBase, info.st_uid != getuid() || info.st_mode & 0o077 != 0 {
                throw Failure(description: "the session registry folder \(path) is not private to user \(getuid()) "
                              + "(owner \(info.st_uid), mode \(String(info.st_mode & 0o777, radix: 8))); remove it, "
                              + "or set JACKAUDIOSESSION_REGISTRY to a folder of your own")
            }
        }
    }

    // MARK: Reading

    /// A session's file as read: its name in the folder and its text.
    public struct Record: Sendable, Equatable {
        /// The file's name in the folder.
        public let file: String
        /// The file's text.
        public let text: String
    }

    /// The files of live sessions, read; files of sessions whose process is
    /// gone are removed on the way (and so are abandoned half-written ones).
    /// nil when the folder cannot be read, or a live session's file could
    /// not be read for being replaced at every look; empty when the folder
    /// does not exist yet.
    public func liveRecords() -> [Record]? {
        liveRecords(betweenOpenAndLock: {})
    }

    /// `liveRecords()`, with `readIfLive`'s hook.
    func liveRecords(betweenOpenAndLock: () -> Void) -> [Record]? {
        guard let folder = opendir(directory) else { return errno == ENOENT ? [] : nil }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            names.append(name)
        }
        var records: [Record] = []
        for name in names.sorted() {
            if name.hasPrefix(".") {
                if name.hasPrefix(RegistryEntry.temporaryPrefix) { removeIfAbandoned(temporary: name) }
                continue
            }
            guard name.hasSuffix(Self.suffix) else { continue }
            switch readIfLive(name, betweenOpenAndLock: betweenOpenAndLock) {
            case let .live(text): records.append(Record(file: name, text: text))
            case .gone: continue
            // A live session cannot be left out: the folder cannot be read as a whole just now.
            case .replacedWhileRead: return nil
            }
        }
        return records
    }

    /// What reading one session's file found.
    enum FileReading: Equatable {
        /// Its session holds its lock: its text.
        case live(String)
        /// No such file, not a plain file, or nobody holds it (its session died: removed).
        case gone
        /// Replaced by its live session at every look (a loaded machine can
        /// hold a reader between its open and its lock while the writer
        /// publishes again and again).
        case replacedWhileRead
    }

    /// Looks a file replaced between its open and its lock up again this many times.
    static let readAttempts = 16

    /// The text of `name` when its session holds its lock; gone (and the
    /// file removed) when nobody does. `betweenOpenAndLock` runs where a
    /// writer's replacement races the reader (tests make the race happen).
    func readIfLive(_ name: String, betweenOpenAndLock: () -> Void = {}) -> FileReading {
        let path = directory + "/" + name
        for _ in 0..<Self.readAttempts {
            // O_NONBLOCK: a FIFO planted here must not block the reader.
            guard let file = try? FileDescriptor.open(path, .readOnly, options: [.noFollow, .nonBlocking, .closeOnExec]) else {
                return .gone
            }
            defer { try? file.close() }
            var info = stat()
            guard fstat(file.rawValue, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return .gone }
            betweenOpenAndLock()
            if flock(file.rawValue, LOCK_SH | LOCK_NB) == 0 {
                // Nobody holds it: its session died, unless it was replaced
                // (and its old file let go) after the open: look again then.
                // (A file its writer let go never comes back under its name.)
                var now = stat()
                guard lstat(path, &now) == 0 else { return .gone }
                if now.st_ino == info.st_ino && now.st_dev == info.st_dev {
                    unlink(path)
                    return .gone
                }
                continue
            }
            // One byte past the bound, so that a longer file is refused as such.
            var bytes = [UInt8](repeating: 0, count: Self.maximumFileSize + 1)
            guard let count = try? bytes.withUnsafeMutableBytes({ try file.read(into: $0) }) else { return .gone }
            return .live(String(decoding: bytes.prefix(count), as: UTF8.self))
        }
        return .replacedWhileRead
    }

    /// A half-written file whose writer is gone (killed between creating and
    /// renaming it): removed once unlocked and a few seconds old.
    private func removeIfAbandoned(temporary name: String) {
        let path = directory + "/" + name
        guard let file = try? FileDescriptor.open(path, .readOnly, options: [.noFollow, .nonBlocking, .closeOnExec]) else {
            return
        }
        defer { try? file.close() }
        var info = stat()
        guard fstat(file.rawValue, &info) == 0, time(nil) - info.st_mtim.tv_sec > 5,
              flock(file.rawValue, LOCK_EX | LOCK_NB) == 0 else { return }
        unlink(path)
    }
}

/// One session's own file in the registry, locked for as long as it is held.
public final class RegistryEntry: Sendable {
    static let temporaryPrefix = ".writing-"
    private static let serial = Mutex<Int>(0)

    /// The registry the entry is in.
    public let registry: SessionRegistry
    /// The file's name in the folder: `PID-N.json`.
    public let file: String
    /// The published file, open and locked (nil: nothing published).
    private let held = Mutex<FileDescriptor?>(nil)

    /// A new entry's name in `registry`; nothing is written until it publishes.
    public init(registry: SessionRegistry) {
        self.registry = registry
        let number = Self.serial.withLock { value -> Int in
            value += 1
            return value
        }
        file = "\(getpid())-\(number)\(SessionRegistry.suffix)"
    }

    deinit { withdraw() }

    /// Publishes `text` in place of what the entry held: written to a new
    /// file that is locked before it is renamed over the old one, so a
    /// reader never sees a partial state or an unlocked live one.
    public func publish(_ text: String) throws(SessionRegistry.Failure) {
        try registry.prepare()
        let temporary = registry.directory + "/" + Self.temporaryPrefix + file
        unlink(temporary)
        let written: FileDescriptor
        do {
            written = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                                              permissions: .ownerReadWrite)
        } catch {
            throw .init(description: "cannot write \(temporary): \(Errno.of(error).sentence)")
        }
        let failure: Errno?
        do {
            _ = try written.writeAll(text.utf8)
            failure = flock(written.rawValue, LOCK_EX | LOCK_NB) == 0 && rename(temporary, registry.directory + "/" + file) == 0
                ? nil : Errno(rawValue: errno)
        } catch {
            failure = Errno.of(error)
        }
        if let failure {
            try? written.close()
            unlink(temporary)
            throw .init(description: "cannot publish the session state in \(registry.directory): \(failure.sentence)")
        }
        let old = held.withLock { held in
            defer { held = written }
            return held
        }
        try? old?.close()
    }

    /// Removes the file and lets go of its lock.
    public func withdraw() {
        guard let published = held.withLock({ held in
            defer { held = nil }
            return held
        }) else { return }
        unlink(registry.directory + "/" + file)
        try? published.close()
    }
}
