import Glibc

/// A port on 127.0.0.1 nobody uses now, chosen by the kernel (bound, read,
/// let go): for a netjack2 master, a Prometheus a test starts.
public enum FreePort {
    public static func udp() throws -> Int { try free(SOCK_DGRAM) }
    public static func tcp() throws -> Int { try free(SOCK_STREAM) }

    private static func free(_ kind: __socket_type) throws -> Int {
        let fd = socket(AF_INET, Int32(kind.rawValue), 0)
        guard fd >= 0 else { throw LoopbackServer.Failure.spawnFailed(errno: errno) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw LoopbackServer.Failure.spawnFailed(errno: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
