import Foundation

/// What a take does while its disk is full (unless `--on-disk-full stop`):
/// the open set was closed as it was, frames go on being counted on the
/// timeline but are not written, and the folder is looked at once a second
/// for room; when there is room again, a new set opens and the frames not
/// written become one logged gap.
///
/// A stage of the take with no disk of its own: it keeps the outage's
/// account and the clock of its looks, and the disk loop (`DiskWriter`)
/// carries out what it says (closing and opening sets, measuring the free
/// space, logging). Times are monotonic nanoseconds, given by the caller.
struct DiskFullPolicy {
    /// The disk full since timeline position `at`; `frames` not written since.
    struct Outage: Equatable {
        let at: Int64
        var frames: Int64
        /// The folder whose free space decides when writing resumes.
        let folder: String
        /// When room was last looked for.
        var lastLook: UInt64
    }

    /// The outage under way (nil: the disk takes what comes).
    private(set) var outage: Outage?

    /// How often the folder is looked at for room.
    static let lookEveryNanoseconds: UInt64 = 1_000_000_000

    /// Whether writing stands still for room.
    var isFull: Bool { outage != nil }

    /// The disk filled writing `path`, at timeline position `at`.
    mutating func filled(at: Int64, path: String, now: UInt64) {
        let folder = (path as NSString).deletingLastPathComponent
        outage = Outage(at: at, frames: 0, folder: folder.isEmpty ? "." : folder, lastLook: now)
    }

    /// Frames that could not be written: on the timeline, in no file.
    mutating func countUnwritten(_ frames: Int) {
        guard frames > 0 else { return }
        outage?.frames += Int64(frames)
    }

    /// The folder to look at for room now: once a second while the disk is
    /// full (nil: not full, or looked at less than a second ago).
    mutating func folderToLookAt(now: UInt64) -> String? {
        guard let outage, now &- outage.lastLook >= Self.lookEveryNanoseconds else { return nil }
        self.outage?.lastLook = now
        return outage.folder
    }

    /// Ends the outage (room came back, or the take ends): what it cost.
    mutating func end() -> Outage? {
        defer { outage = nil }
        return outage
    }
}
