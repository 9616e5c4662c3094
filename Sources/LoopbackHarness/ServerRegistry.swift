#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JackKit
import Synchronization

/// jackd2's machine-wide table of running servers (`/dev/shm/jack-shm-registry`).
///
/// It has eight slots. A server that exits cleanly frees its slot; one that is
/// killed (SIGKILL, a crash) leaves it taken, and jackd only reclaims a dead
/// slot when a server of the *same name* starts. Tests and self-tests use a
/// new name every time, so after eight hard kills no server can start at all
/// ("Too many servers already active"). The harness therefore frees the slots
/// of servers whose process is gone, under the same lock jackd takes.
///
/// Layout (jack2 `shm.h`, 1.9.x): a header of magic, type, protocol, size,
/// `hdr_len`, `entry_len` (six 32-bit words), then the server slots, each a
/// `pid_t` followed by the server's prefix string, up to `hdr_len`.
public enum ServerRegistry {
    static let path = "/dev/shm/jack-shm-registry"
    static let semaphoreKey: key_t = 0x282929
    static let magic: UInt32 = 0x4A41434B
    static let slotCount = 8
    static let slotsOffset = 24

    /// A server slot: the PID that holds it and its name prefix (`jack-UID:NAME:`).
    public struct Slot: Equatable, Sendable {
        public let pid: pid_t
        public let prefix: String
    }

    /// The taken slots, or nil when there is no registry (no server ever ran).
    public static func slots() -> [Slot]? {
        withRegistry { header, slotStride in
            (0..<slotCount).compactMap { index -> Slot? in
                let slot = header + slotsOffset + index * slotStride
                let pid = slot.load(as: pid_t.self)
                guard pid != 0 else { return nil }
                let prefix = String(cString: (slot + MemoryLayout<pid_t>.size).assumingMemoryBound(to: CChar.self))
                return Slot(pid: pid, prefix: prefix)
            }
        }
    }

    /// The slots whose process runs: the servers of this user running now.
    public static func runningServers() -> [Slot] {
        (slots() ?? []).filter { kill($0.pid, 0) == 0 }
    }

    /// Frees every slot whose process no longer exists, and removes the socket
    /// and semaphore files in `/dev/shm` that such a server left behind.
    /// Returns the names of the servers whose slots were freed.
    @discardableResult
    public static func reclaimDeadServers() -> [String] {
        let freed: [String] = withRegistry { header, slotStride in
            var names: [String] = []
            for index in 0..<slotCount {
                let slot = header + slotsOffset + index * slotStride
                let pid = slot.load(as: pid_t.self)
                guard pid != 0, kill(pid, 0) == -1, errno == ESRCH else { continue }
                let prefix = String(cString: (slot + MemoryLayout<pid_t>.size).assumingMemoryBound(to: CChar.self))
                memset(slot, 0, slotStride)
                if let name = serverName(fromPrefix: prefix) { names.append(name) }
            }
            return names
        } ?? []
        for name in freed { removeLeftoverFiles(ofServer: name) }
        return freed
    }

    /// `jack-0:NAME:` → `NAME`.
    static func serverName(fromPrefix prefix: String) -> String? {
        guard prefix.hasPrefix("jack-"), prefix.hasSuffix(":"),
              let firstColon = prefix.firstIndex(of: ":") else { return nil }
        let name = prefix[prefix.index(after: firstColon)..<prefix.index(before: prefix.endIndex)]
        return name.isEmpty ? nil : String(name)
    }

    /// The sockets (`jack_NAME_UID_N`) and named semaphores
    /// (`jack_sem.UID_NAME_CLIENT`) of a server that is gone.
    static func removeLeftoverFiles(ofServer name: String) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm") else { return }
        let uid = getuid()
        for entry in entries where entry.hasPrefix("jack_\(name)_\(uid)_") || entry.hasPrefix("jack_sem.\(uid)_\(name)_") {
            unlink("/dev/shm/\(entry)")
        }
    }

    /// Maps the registry and runs `body` with the registry lock held.
    private static func withRegistry<T>(_ body: (UnsafeMutableRawPointer, Int) -> T) -> T? {
        let semaphore = semget(semaphoreKey, 1, 0)
        guard semaphore != -1 else { return nil }
        let descriptor = open(path, O_RDWR)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size >= slotsOffset else { return nil }
        let length = Int(status.st_size)
        guard let mapping = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0),
              mapping != MAP_FAILED else { return nil }
        defer { munmap(mapping, length) }
        guard mapping.load(as: UInt32.self) == magic else { return nil }
        let headerLength = Int(mapping.load(fromByteOffset: 16, as: UInt32.self))
        let slotStride = (headerLength - slotsOffset) / slotCount
        guard headerLength <= length, slotStride > MemoryLayout<pid_t>.size else { return nil }
        // jackd's lock: one SysV semaphore, taken with SEM_UNDO so that a
        // process dying while holding it does not wedge every server.
        var take = sembuf(sem_num: 0, sem_op: -1, sem_flg: Int16(SEM_UNDO))
        while semop(semaphore, &take, 1) == -1 {
            guard errno == EINTR else { return nil }
        }
        defer {
            var give = sembuf(sem_num: 0, sem_op: 1, sem_flg: Int16(SEM_UNDO))
            _ = semop(semaphore, &give, 1)
        }
        return body(mapping, slotStride)
    }
}
