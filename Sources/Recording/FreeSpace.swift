import Glibc

/// The space on the file system that holds a folder, as the recorder's
/// rules read it: whether a take may start there, whether writing may
/// resume after the disk was full, what retention frees.
struct FreeSpace {
    /// Bytes an unprivileged writer may still use.
    let availableBytes: Int64
    /// The file system's size, bytes.
    let sizeBytes: Int64

    /// The file system that holds `folder` (nil: it cannot be read).
    init?(folder: String) {
        var fs = statvfs()
        guard statvfs(folder, &fs) == 0 else { return nil }
        availableBytes = Int64(fs.f_bavail) * Int64(fs.f_frsize)
        sizeBytes = Int64(fs.f_blocks) * Int64(fs.f_frsize)
    }

    /// What `seconds` of audio take on disk, with 64 KiB for a file's headers.
    static func bytes(seconds: Double, sampleRate: Int, channels: Int, format: RecordingFormat) -> Int64 {
        Int64(seconds * Double(sampleRate * channels * format.sampleFormat.bytes)) + 65_536
    }
}
