import Glibc

/// jackd2's server registry as this process's libjack attached it: the
/// shared-memory file `/dev/shm/jack-shm-registry`, mapped at the first
/// open and never let go (jack2 `common/shm.c`: `jack_initialize_shm` returns
/// at once while its header is mapped, and no call maps it again, not even
/// after the last client's close).
///
/// When that file is removed while no jackd runs (`rm /dev/shm/jack*`,
/// systemd-logind's `RemoveIPC=yes` at a user's last logout) the next jackd
/// makes a new one, and this process keeps the old mapping: every
/// `jack_client_open` then fails with status 0x21 for as long as the process
/// lives. The process can tell (its mapping in `/proc/self/maps` against the
/// file on disk), not cure: only a new process attaches the new registry.
/// PipeWire's JACK has no such registry, and nothing is ever found replaced there.
public struct RegistryAttachment: Sendable, Equatable {
    /// Where jackd2 keeps its registry (in this mount namespace's `/dev/shm`).
    public static let path = "/dev/shm/jack-shm-registry"

    /// The device and inode of the file mapped, as `/proc/self/maps` gives them.
    public var device: String
    public var inode: UInt64
    /// The kernel says the mapped file was removed (` (deleted)` after its path).
    public var removed: Bool

    public init(device: String, inode: UInt64, removed: Bool) {
        self.device = device
        self.inode = inode
        self.removed = removed
    }

    /// The registry mapped in `maps` (the text of a `/proc/PID/maps`); nil
    /// when none is (libjack has not opened a client yet, or PipeWire's JACK).
    public static func mapped(in maps: Substring) -> RegistryAttachment? {
        for line in maps.split(separator: "\n") where line.contains(path) {
            // address perms offset dev inode path[ (deleted)]
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, let inode = UInt64(fields[4]) else { continue }
            let file = fields[5].trimmingPrefixSpaces()
            guard file == path || file == path + " (deleted)" else { continue }
            return RegistryAttachment(device: String(fields[3]), inode: inode, removed: file.hasSuffix(" (deleted)"))
        }
        return nil
    }

    /// This process's attachment now (nil: none).
    public static func current() -> RegistryAttachment? {
        ServerProcess.text("/proc/self/maps", limit: 4 << 20).flatMap { mapped(in: Substring($0)) }
    }

    /// Whether `file` (the registry's `stat` now, nil when there is none) is
    /// another registry than the one mapped: the mapped one was removed, or a
    /// file with another device or inode stands at its path.
    public func isReplaced(byFileWith file: (device: UInt64, inode: UInt64)?) -> Bool {
        if removed { return true }
        guard let file else { return true }
        return file.inode != inode || Self.deviceName(file.device) != device
    }

    /// The registry file's device and inode now (nil: no such file).
    public static func fileOnDisk() -> (device: UInt64, inode: UInt64)? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    /// A device number as `/proc/PID/maps` prints it: major:minor in hex, two digits at least.
    public static func deviceName(_ device: UInt64) -> String {
        let major = (device >> 8) & 0xfff | (device >> 32) & ~UInt64(0xfff)
        let minor = device & 0xff | (device >> 12) & ~UInt64(0xff)
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return digits.count < 2 ? "0" + digits : digits
        }
        return hex(major) + ":" + hex(minor)
    }

    /// When this process's registry was replaced: what happened and what to
    /// do, for a person (nil: not replaced, or none attached).
    public static func replacement() -> String? {
        guard let attached = current(), attached.isReplaced(byFileWith: fileOnDisk()) else { return nil }
        return replacementReason(removedOnly: fileOnDisk() == nil)
    }

    static func replacementReason(removedOnly: Bool) -> String {
        "JACK's server registry \(path) was " + (removedOnly ? "removed" : "replaced by a new one")
            + " since this process's libjack attached it (by `rm /dev/shm/jack*`, or systemd-logind's RemoveIPC=yes "
            + "at the user's last logout); libjack cannot attach the new one, so no client of this process can reach "
            + "a JACK server again: start the program again (jas re-executes itself; set RemoveIPC=no in "
            + "/etc/systemd/logind.conf, or run the logger as a system user, so that it does not happen)"
    }
}

extension Substring {
    fileprivate func trimmingPrefixSpaces() -> Substring {
        drop(while: { $0 == " " })
    }
}
