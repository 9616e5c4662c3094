import Glibc
import JackKit
import SystemPackage

/// jackd2's libjack binds a client's notification socket at
/// `/dev/shm/jack_NAME_UID_0`: the client's name and the user, not the
/// server. Opening binds it (unlinking whatever is there) and closing
/// unlinks it, so two processes of one user opening or closing clients of
/// the same name at the same moment, even on different servers, take each
/// other's socket, and one open fails ("server error": the server's first
/// notification finds a broken pipe). Every open and close of a
/// process holds this lock, one per client name and user (`flock` on a file
/// beside the sockets), for as long as the call lasts; a holder that dies
/// lets go. Other JACK programs do not take it (see JACK-NOTES.md).
enum ClientNameLock {
    /// How long a call waits for the name before going ahead anyway.
    static let patience = 5.0

    /// Runs `body` holding the lock for client name `name`.
    static func holding<Result>(_ name: String, _ body: () throws -> Result) rethrows -> Result {
        let held = acquire(name)
        defer {
            if let held {
                flock(held.rawValue, LOCK_UN)
                try? held.close()
            }
        }
        return try body()
    }

    private static func path(_ name: String) -> String {
        let folder = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        // The name as a file name: anything but letters, digits, '-' and '_' as its byte in hex.
        let safe = name.utf8.map { byte -> String in
            let character = Character(Unicode.Scalar(byte))
            return (character.isLetter || character.isNumber || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_"))
                && byte < 0x80 ? String(character) : "%" + String(byte, radix: 16)
        }.joined()
        return "\(folder)/jackkit-client-\(getuid())-\(safe).lock"
    }

    /// The lock file, locked; nil when it cannot be opened or the patience runs out.
    private static func acquire(_ name: String) -> FileDescriptor? {
        guard let file = try? FileDescriptor.open(path(name), .readWrite, options: [.create, .closeOnExec],
                                                  permissions: .ownerReadWrite) else { return nil }
        let deadline = MonotonicClock.nanoseconds + UInt64(patience * 1e9)
        while flock(file.rawValue, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, MonotonicClock.nanoseconds < deadline else {
                try? file.close()
                return nil
            }
            usleep(5_000)
        }
        return file
    }
}
