import Glibc

/// The jackd process that serves a server name, found through `/proc`: used
/// to tell a stopped server (SIGSTOP, Ctrl-Z, a debugger) from a slow one
/// before libjack is asked. A client open on a stopped jackd never returns,
/// and the thread stuck in it would leave libjack unusable in the process.
public enum ServerProcess {
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

    /// The PID of a stopped jackd serving `serverName`, if there is one.
    public static func stopped(serverName: String) -> Int32? {
        firstServing(serverName) { $0 == "T" || $0 == "t" }
    }

    /// The PID of a jackd (running or stopped, not a zombie) serving `serverName`, if there is one.
    public static func serving(serverName: String) -> Int32? {
        firstServing(serverName) { $0 != "Z" && $0 != "X" }
    }

    /// The first jackd serving `serverName` whose state letter passes `state`.
    private static func firstServing(_ serverName: String, state wanted: (Character) -> Bool) -> Int32? {
        guard let directory = opendir("/proc") else { return nil }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), pid != getpid() else { continue }
            guard let arguments = commandLine(of: pid), serves(serverName, arguments: arguments),
                  let state = state(of: pid), wanted(state) else { continue }
            return pid
        }
        return nil
    }

    /// Whether the command line is a jackd that serves `serverName`.
    static func serves(_ serverName: String, arguments: [String]) -> Bool {
        guard let program = arguments.first, program.split(separator: "/").last == "jackd" else { return false }
        var named: String?
        var index = 1
        // Server options come before the driver's (-d): only those name it.
        while index < arguments.count, arguments[index] != "-d", !arguments[index].hasPrefix("--driver") {
            let argument = arguments[index]
            if argument == "-n" || argument == "--name" {
                named = index + 1 < arguments.count ? arguments[index + 1] : nil
                index += 1
            } else if argument.hasPrefix("--name=") {
                named = String(argument.dropFirst(7))
            } else if argument.hasPrefix("-n") && argument.count > 2 && !argument.hasPrefix("--") {
                named = String(argument.dropFirst(2))
            }
            index += 1
        }
        return (named ?? "default") == serverName
    }

    private static func commandLine(of pid: Int32) -> [String]? {
        guard let bytes = read("/proc/\(pid)/cmdline", limit: 8192), !bytes.isEmpty else { return nil }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast(bytes.last == 0 ? 1 : 0)
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// The state letter of /proc/PID/stat (after the parenthesised name).
    private static func state(of pid: Int32) -> Character? {
        guard let bytes = read("/proc/\(pid)/stat", limit: 1024),
              let close = bytes.lastIndex(of: UInt8(ascii: ")")), close + 2 < bytes.count else { return nil }
        return Character(UnicodeScalar(bytes[close + 2]))
    }

    private static func read(_ path: String, limit: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: limit)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, limit) }
        guard count >= 0 else { return nil }
        return Array(bytes.prefix(count))
    }
}
