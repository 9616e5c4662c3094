import Foundation
import Synchronization

/// How long a logger keeps its own files and how much room it leaves on the
/// disk: `--keep` deletes its files once older than that, `--min-free`
/// deletes its oldest files to keep that much free. Only files the take's
/// manifest lists as this logger's, closed, and still the same file on disk
/// (device and inode) are ever deleted.
public struct Retention: Sendable, Equatable {
    /// Delete files whose last frame is older than this, seconds.
    public var keepSeconds: Double?
    /// Keep at least this much free on the file system of the files, bytes
    /// or a percentage of its size.
    public var minimumFree: MinimumFree?

    /// A free-space floor: bytes, or a percentage of the file system's size.
    public enum MinimumFree: Sendable, Equatable {
        /// At least this many bytes free.
        case bytes(Int64)
        /// At least this percentage of the file system free.
        case percent(Double)

        func bytes(ofFileSystemSize size: Int64) -> Int64 {
            switch self {
            case let .bytes(bytes): bytes
            case let .percent(percent): Int64(Double(size) * percent / 100)
            }
        }
    }

    /// A rule; with neither limit it deletes nothing.
    public init(keepSeconds: Double? = nil, minimumFree: MinimumFree? = nil) {
        self.keepSeconds = keepSeconds
        self.minimumFree = minimumFree
    }

    /// True when the rule can delete anything.
    public var isActive: Bool { keepSeconds != nil || minimumFree != nil }

    /// Which of `files` (closed, oldest first) to delete now, and why: those
    /// past `keepSeconds` at `now`, then the oldest until `freeBytes` plus
    /// what they free reaches the minimum.
    func deletions(of files: [ManifestLine], now: Double, freeBytes: Int64,
                   fileSystemBytes: Int64) -> [(entry: ManifestLine, reason: String)] {
        var chosen: [(ManifestLine, String)] = []
        var free = freeBytes
        let minimum = minimumFree.map { $0.bytes(ofFileSystemSize: fileSystemBytes) }
        for file in files {
            let end = file.endUTC ?? file.startUTC
            if let keep = keepSeconds, now - end > keep {
                chosen.append((file, String(format: "older than --keep (%.0f s)", keep)))
                free += file.bytes ?? 0
            } else if let minimum, free < minimum {
                chosen.append((file, "free space below --min-free (\(RecordingError.size(free)) free, "
                               + "\(RecordingError.size(minimum)) asked)"))
                free += file.bytes ?? 0
            }
        }
        return chosen
    }
}

/// Applies a take's retention every two seconds and whenever asked (before
/// each new file), on a thread of its own; each deletion is logged.
final class RetentionKeeper: Sendable {
    let retention: Retention
    let catalogue: TakeCatalogue
    /// A folder on the file system the files are on.
    let folder: String
    let clock: any WallClock
    let record: @Sendable (RecordingEvent) -> Void
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)

    init(retention: Retention, catalogue: TakeCatalogue, folder: String, clock: any WallClock,
         record: @escaping @Sendable (RecordingEvent) -> Void) {
        self.retention = retention
        self.catalogue = catalogue
        self.folder = folder
        self.clock = clock
        self.record = record
    }

    func start() {
        Thread { [self] in
            Thread.current.name = "jas-record-retention"
            while !stopped.load(ordering: .acquiring) {
                applyOnce()
                _ = wake.wait(timeout: .now() + 2)
            }
            ended.signal()
        }.start()
    }

    /// Looks now (a new file is about to open, or the disk is full).
    func poke() { wake.signal() }

    func stop() {
        stopped.store(true, ordering: .releasing)
        wake.signal()
        ended.wait()
    }

    /// One pass: deletes what the retention says, logging each.
    func applyOnce() {
        catalogue.waitUntilWritten()
        catalogue.flush()
        guard let space = FreeSpace(folder: folder) else { return }
        let now = clock.read().utc
        let manifest = catalogue.manifest
        // Only what is still the file the manifest lists.
        let ours = manifest.closedFiles.filter { entry in
            var info = stat()
            return stat(manifest.resolve(entry.path), &info) == 0 && UInt64(info.st_dev) == entry.device
                && UInt64(info.st_ino) == entry.inode
        }
        for (entry, reason) in retention.deletions(of: ours, now: now, freeBytes: space.availableBytes, fileSystemBytes: space.sizeBytes) {
            let path = manifest.resolve(entry.path)
            guard unlink(path) == 0 else {
                record(.deleteFailed(path: path, reason: String(cString: strerror(errno))))
                continue
            }
            catalogue.deleted(entry, reason: reason, at: now)
            record(.deleted(path: path, ageSeconds: now - (entry.endUTC ?? entry.startUTC), reason: reason))
            // A folder of the pattern's (one per day) that is now empty goes too; never one with anything in it.
            let parent = (path as NSString).deletingLastPathComponent
            if TakeManifest.absolute(parent) != TakeManifest.absolute((manifest.path as NSString).deletingLastPathComponent) {
                rmdir(parent)
            }
        }
    }
}
