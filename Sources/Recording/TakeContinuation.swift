import Foundation

/// Where a take's numbering starts. A logger restarted on its manifest goes
/// on from it: its files are listed there, never refused as someone else's,
/// and the next set takes the next index. A take whose manifest another
/// recorder is writing now is not continued (its files are refused as
/// usual). A run killed between creating a file and listing it left a file
/// the manifest does not know at the next index: it is this logger's (the
/// index is the one its manifest, which lists files already, gives next),
/// so it is listed as recovered, and numbering goes on after it. Without a
/// manifest that lists files, an existing file is refused.
struct TakeContinuation {
    /// The take's manifest (nil: none, a take to a device or a FIFO).
    let manifest: TakeManifest?
    /// The first set's index.
    let firstIndex: Int
    /// Files at the indexes before it that the manifest does not list, to be listed as recovered.
    let unlisted: [(path: String, index: Int)]

    /// Reads where a take named by `naming` (its manifest at `manifestPath`,
    /// nil: beside the files) goes on from, at UTC `now`.
    init(naming: TakeNaming, manifestPath: String?, signingKey: ManifestSigningKey?, now: Double) {
        let firstPath = naming.basePath(index: 1, utc: now)
        var manifest: TakeManifest?
        if RecordingLog.path(for: firstPath) != nil && !Recorder.isFIFO(firstPath) {
            manifest = TakeManifest(path: manifestPath ?? TakeManifest.defaultPath(forPattern: naming.pattern),
                                    signingKey: signingKey)
        }
        let continuing = manifest.map { !TakeManifest.isInUse($0.path) } ?? false
        var firstIndex = continuing ? (manifest?.highestIndex ?? 0) + 1 : 1
        var unlisted: [(path: String, index: Int)] = []
        if continuing && firstIndex > 1 && !naming.hasTimeFields {
            while case let existing = naming.paths(index: firstIndex, utc: now)
                .filter({ FileManager.default.fileExists(atPath: $0) }), !existing.isEmpty {
                unlisted += existing.map { ($0, firstIndex) }
                firstIndex += 1
            }
        }
        self.manifest = manifest
        self.firstIndex = firstIndex
        self.unlisted = unlisted
    }
}
