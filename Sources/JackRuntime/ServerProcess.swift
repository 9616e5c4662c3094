#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JackKit
import SystemPackage

/// A jackd process on this machine, found through `/proc` by the server name
/// its command line gives (`-n`, `--name`, or its `JACK_DEFAULT_SERVER`,
/// else "default"). Only a jackd whose `/dev/shm` is this process's counts:
/// one of the same name in another mount namespace serves another machine.
///
/// Used before libjack is asked: a client open on a stopped jackd (SIGSTOP,
/// Ctrl-Z, a debugger) never returns and leaves libjack unusable in the
/// process, and jackd2's request socket tells whether the server is between
/// making and removing its metadata store.
public struct ServerProcess: Sendable, Equatable {
    public let pid: Int32
    /// Its state letter in `/proc/PID/stat` (`R`, `S`, `T` stopped, `Z` a zombie, ...).
    public let state: Character
    /// Everything after `-d DRIVER`.
    public let driverArguments: [String]

    /// The folder jackd2 keeps its sockets and metadata store in.
    public static let serverFolder = "/dev/shm"

    /// The name of jackd2's request socket for `serverName` in `serverFolder`.
    /// jackd creates it after its metadata store (the `JackServer` constructor
    /// makes the store, `Open` the socket) and removes it before tearing the
    /// store down on a clean stop (`Close` first, the destructor after): while
    /// it exists, the store is neither being made nor being removed.
    public static func requestSocketName(serverName: String) -> String { "jack_\(serverName)_\(getuid())_0" }

    /// Whether jackd2's request socket for `serverName` exists.
    public static func requestSocketExists(serverName: String) -> Bool {
        access(serverFolder + "/" + requestSocketName(serverName: serverName), F_OK) == 0
    }

    /// The jackd serving `serverName` here, running or stopped (not a zombie).
    public static func find(serverName: String, procRoot: String = "/proc") -> ServerProcess? {
        all(serverName: serverName, procRoot: procRoot).first { $0.state != "Z" && $0.state != "X" }
    }

    /// The PID of a stopped jackd serving `serverName`, if there is one.
    public static func stopped(serverName: String) -> Int32? {
        all(serverName: serverName).first(where: \.isStopped)?.pid
    }

    /// Stopped by a signal or a debugger (`T`, `t`).
    public var isStopped: Bool { state == "T" || state == "t" }

    /// The PID of a jackd (running or stopped, not a zombie) serving `serverName`, if there is one.
    public static func serving(serverName: String) -> Int32? { find(serverName: serverName)?.pid }

    /// What can be seen of `serverName` now (see `ServerPresence`).
    public static func presence(serverName: String) -> ServerPresence {
        guard !LibraryVersion.isPipeWire else { return ServerPresence() }
        return ServerPresence(requestSocket: requestSocketExists(serverName: serverName),
                              process: serving(serverName: serverName) != nil)
    }

    /// Every jackd of this mount namespace that serves `serverName`. Read
    /// with plain system calls: it runs before every open and at every
    /// reconnect attempt (Foundation's file reading here grew each of the
    /// soak's tools by some 700 KiB a restart).
    static func all(serverName: String, procRoot: String = "/proc") -> [ServerProcess] {
        guard let directory = opendir(procRoot) else { return [] }
        defer { closedir(directory) }
        var ours = stat()
        guard stat(serverFolder, &ours) == 0 else { return [] }
        var found: [ServerProcess] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), pid != getpid(),
                  let commandLine = read("\(procRoot)/\(name)/cmdline", limit: 8192),
                  let process = parse(pid: pid, commandLine: commandLine, environment: { environmentValue($0, pid: pid, procRoot: procRoot) }),
                  process.name == serverName else { continue }
            var theirs = stat()
            guard stat("\(procRoot)/\(name)/root\(serverFolder)", &theirs) == 0, theirs.st_dev == ours.st_dev,
                  theirs.st_ino == ours.st_ino, let state = state(pid: pid, procRoot: procRoot) else { continue }
            found.append(ServerProcess(pid: pid, state: state, driverArguments: process.driverArguments))
        }
        return found
    }

    /// A jackd command line's server name and driver arguments; nil when it is not jackd's.
    static func parse(pid: Int32, commandLine: [UInt8], environment: (String) -> String?)
        -> (name: String, driverArguments: [String])? {
        let arguments = commandLine.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let program = arguments.first?.split(separator: "/").last, program == "jackd" || program == "jackdmp" else {
            return nil
        }
        var name: String?
        var index = 1
        // Server options come before the driver's (-d): only those name it.
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--driver=") {
                return (name ?? environment("JACK_DEFAULT_SERVER") ?? "default", Array(arguments.dropFirst(index + 1)))
            }
            if argument == "-d" || argument == "--driver" {
                return (name ?? environment("JACK_DEFAULT_SERVER") ?? "default", Array(arguments.dropFirst(index + 2)))
            }
            if argument.hasPrefix("-d"), argument.count > 2, !argument.hasPrefix("--") {
                return (name ?? environment("JACK_DEFAULT_SERVER") ?? "default", Array(arguments.dropFirst(index + 1)))
            }
            if argument == "-n" || argument == "--name", index + 1 < arguments.count {
                name = arguments[index + 1]
                index += 1
            } else if argument.hasPrefix("--name=") {
                name = String(argument.dropFirst(7))
            } else if argument.hasPrefix("-n"), argument.count > 2, !argument.hasPrefix("--") {
                name = String(argument.dropFirst(2))
            }
            index += 1
        }
        return (name ?? environment("JACK_DEFAULT_SERVER") ?? "default", [])
    }

    /// The value of a driver option given as `-x VALUE`, `-xVALUE` or `--long=VALUE`/`--long VALUE`.
    public func driverOption(_ spellings: [String]) -> String? {
        var index = 0
        while index < driverArguments.count {
            let argument = driverArguments[index]
            for spelling in spellings {
                if argument == spelling, index + 1 < driverArguments.count { return driverArguments[index + 1] }
                if spelling.hasPrefix("--"), argument.hasPrefix(spelling + "=") { return String(argument.dropFirst(spelling.count + 1)) }
                if !spelling.hasPrefix("--"), argument.hasPrefix(spelling), argument.count > spelling.count {
                    return String(argument.dropFirst(spelling.count))
                }
            }
            index += 1
        }
        return nil
    }

    /// The state letter of `/proc/PID/stat` (after the parenthesised name).
    private static func state(pid: Int32, procRoot: String) -> Character? {
        guard let bytes = read("\(procRoot)/\(pid)/stat", limit: 1024),
              let close = bytes.lastIndex(of: UInt8(ascii: ")")), close + 2 < bytes.count else { return nil }
        return Character(UnicodeScalar(bytes[close + 2]))
    }

    private static func environmentValue(_ key: String, pid: Int32, procRoot: String) -> String? {
        guard let bytes = read("\(procRoot)/\(pid)/environ", limit: 65_536) else { return nil }
        for entry in bytes.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            if text.hasPrefix(key + "=") { return String(text.dropFirst(key.count + 1)) }
        }
        return nil
    }

    /// Up to `limit` bytes of a file, as text.
    static func text(_ path: String, limit: Int) -> String? {
        read(path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The names in a folder, without `.` and `..`.
    static func entries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Up to `limit` bytes of a file (a /proc file has no size to ask for
    /// first), read 16 KiB at a time: a large limit costs nothing unless
    /// the file is that long.
    private static func read(_ path: String, limit: Int) -> [UInt8]? {
        guard let file = try? FileDescriptor.open(path, .readOnly, options: .closeOnExec) else { return nil }
        return try? file.closeAfter {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: min(limit, 16_384))
            while bytes.count < limit {
                let wanted = min(chunk.count, limit - bytes.count)
                // A read interrupted by a signal is tried again (swift-system's default).
                let got = (try? chunk.withUnsafeMutableBytes { try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted])) }) ?? 0
                guard got > 0 else { break }
                bytes.append(contentsOf: chunk[..<got])
            }
            return bytes
        }
    }
}
