import CSndFile
import Foundation

/// Puts a take's files in its manifest, off the disk thread: a line when a
/// file opens, and when it closes its frames, gaps and SHA-256 (hashing an
/// hour of audio takes seconds, which the disk thread must not wait for).
/// A line that cannot be written (the disk is full) waits and is written
/// with the next, in order.
final class TakeCatalogue: @unchecked Sendable { // `pending` is the queue's own
    let manifest: TakeManifest
    private let queue = DispatchQueue(label: "jas-record-catalogue")
    private var pending: [ManifestLine] = []
    /// Told when a line could not be written (once per failure).
    private let onProblem: @Sendable (String) -> Void

    init(manifest: TakeManifest, onProblem: @escaping @Sendable (String) -> Void) {
        self.manifest = manifest
        self.onProblem = onProblem
    }

    /// A file was opened: its identity, start and format.
    func opened(_ path: String, index: Int, startUTC: Double, utcOffset: Int, sampleRate: Int, channels: Int) {
        var info = stat()
        stat(path, &info)
        let line = ManifestLine(event: .opened, path: manifest.relative(path), index: index, startUTC: startUTC,
                                start: ManifestLine.iso(startUTC), utcOffset: utcOffset, sampleRate: sampleRate,
                                channels: channels, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        queue.async { self.write(line) }
    }

    /// A file was closed after `frames` frames ending at `endUTC`.
    func closed(_ path: String, index: Int, startUTC: Double, endUTC: Double, utcOffset: Int, sampleRate: Int,
                channels: Int, frames: Int64, timeReference: UInt64?, gaps: [ManifestLine.Gap], loudness: FileLoudness? = nil,
                recovered: Bool = false, startEstimated: Bool = false, timeBasis: ManifestLine.TimeBasis? = nil) {
        let relative = manifest.relative(path)
        queue.async {
            var info = stat()
            stat(path, &info)
            var line = ManifestLine(event: .closed, path: relative, index: index, startUTC: startUTC,
                                    start: ManifestLine.iso(startUTC), utcOffset: utcOffset, sampleRate: sampleRate,
                                    channels: channels, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            line.frames = frames
            line.endUTC = endUTC
            line.timeReference = timeReference
            line.gaps = gaps
            line.sha256 = FileDigest.sha256(ofFile: path)
            line.bytes = Int64(info.st_size)
            line.loudness = loudness
            line.recovered = recovered ? true : nil
            line.startEstimated = startEstimated ? true : nil
            line.timeBasis = timeBasis
            self.write(line)
        }
    }

    /// Retention deleted a file it listed.
    func deleted(_ entry: ManifestLine, reason: String, at utc: Double) {
        var line = entry
        line.event = .deleted
        line.reason = reason
        line.deletedUTC = utc
        line.sha256 = nil
        line.gaps = nil
        let deletion = line
        queue.async { self.write(deletion) }
    }

    /// Writes what waits (after a full disk), in order.
    func flush() { queue.async { self.write(nil) } }

    /// Returns once every line handed over so far is written (or waits for room).
    func waitUntilWritten() { queue.sync {} }

    private func write(_ line: ManifestLine?) {
        if let line { pending.append(line) }
        while let next = pending.first {
            do {
                try manifest.append(next)
                pending.removeFirst()
            } catch {
                if line != nil { onProblem(error.description) }
                return
            }
        }
    }

    /// Files a run that was killed left open: each that is still the file it
    /// opened (same device and inode) is closed in the manifest now, its
    /// frames read from its header.
    func recoverOrphans() -> [String] {
        var recovered: [String] = []
        for entry in manifest.openedNeverClosed {
            let path = manifest.resolve(entry.path)
            var info = stat()
            guard stat(path, &info) == 0, UInt64(info.st_dev) == entry.device, UInt64(info.st_ino) == entry.inode else { continue }
            var format = SF_INFO()
            guard let file = sf_open(path, Int32(SFM_READ), &format) else { continue }
            sf_close(file)
            let frames = Int64(format.frames)
            closed(path, index: entry.index, startUTC: entry.startUTC,
                   endUTC: entry.startUTC + Double(frames) / Double(max(1, entry.sampleRate)), utcOffset: entry.utcOffset,
                   sampleRate: entry.sampleRate, channels: entry.channels, frames: frames, timeReference: nil, gaps: [],
                   recovered: true)
            recovered.append(path)
        }
        return recovered
    }

    /// A file of this take that a killed run created but never listed: closed
    /// in the manifest now, recovered, its frames from its header. Its start
    /// is not known to the frame: its last write (the file's time of
    /// modification) less its length, marked `start_estimated`. False when
    /// it is not a sound file.
    func recoverUnlisted(_ path: String, index: Int, zone: RecordingTimeZone) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        var format = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &format) else { return false }
        sf_close(file)
        let frames = Int64(format.frames)
        let rate = Int(max(1, format.samplerate))
        let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        let start = modified - Double(frames) / Double(rate)
        closed(path, index: index, startUTC: start, endUTC: modified, utcOffset: zone.offset(at: start),
               sampleRate: rate, channels: Int(format.channels), frames: frames, timeReference: nil, gaps: [],
               recovered: true, startEstimated: true)
        return true
    }
}
