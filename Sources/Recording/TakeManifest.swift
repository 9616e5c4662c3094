import Foundation
import JackRuntime
import Synchronization
import SystemPackage

/// One line of a take's manifest (JSON Lines): a file opened, a file
/// closed (its frames, gaps and SHA-256), or a file deleted by retention.
/// What retention, extraction and verification read; a person can read it too.
public struct ManifestLine: Codable, Sendable, Equatable {
    /// What a line records.
    public enum Event: String, Codable, Sendable {
        /// A file opened, closed, or deleted by retention.
        case opened, closed, deleted
    }

    /// How a closed file's start time was measured: what it is good to (the
    /// docs/LOGGER.md's table of a logger's times gives the figures).
    public enum TimeBasis: String, Codable, Sendable {
        /// On the frame clock's line, settled when the file began.
        case settled
        /// The clock had not settled when the file began (late callbacks, or
        /// a jump of the server's clock not yet told from them); measured
        /// again once it had, on the line the server's cycles were on.
        case revised
        /// The clock had not settled when the file began, and the jump it then
        /// saw came after the file's first frame: the time on the line before stands.
        case kept
        /// The file closed before the clock settled: its start may be off by
        /// as much as the server's clock jumped (up to a period or more).
        case unsettled
    }

    /// A gap inside a file (`written`: silence in the file) or before it
    /// (not written: the disk was full), positions in the file's frames.
    public struct Gap: Codable, Sendable, Equatable {
        /// Where, in the file's frames.
        public var atFrame: Int64
        /// How many frames.
        public var frames: Int64
        /// Why the frames are missing.
        public var reason: String
        /// True when silence was written for them, false when they were not written (the disk was full).
        public var written: Bool

        /// A gap of `frames` at `atFrame`, for `reason`.
        public init(atFrame: Int64, frames: Int64, reason: String, written: Bool) {
            self.atFrame = atFrame
            self.frames = frames
            self.reason = reason
            self.written = written
        }

        enum CodingKeys: String, CodingKey {
            case atFrame = "at_frame", frames, reason, written
        }
    }

    /// What the line records.
    public var event: Event
    /// The file, relative to the manifest's folder when inside it.
    public var path: String
    /// The set's index in its take (rotations and rate changes count up).
    public var index: Int
    /// UTC of its first frame, seconds since 1970, and the same as ISO 8601 (milliseconds, Z).
    public var startUTC: Double
    /// UTC of the first frame as ISO 8601 with milliseconds.
    public var start: String
    /// The zone's offset east of UTC at the first frame, seconds (names and `bext` are in that zone).
    public var utcOffset: Int
    /// Frames a second.
    public var sampleRate: Int
    /// Channels in the file.
    public var channels: Int
    /// The file's identity on disk when it was opened: a file of the same
    /// name that is another file is never this logger's.
    public var device: UInt64
    /// The file's inode (with `device`).
    public var inode: UInt64
    // Closed: what the file holds.
    /// Frames in the file.
    public var frames: Int64?
    /// UTC of the frame after its last (the next file's first, when no gap lies between).
    public var endUTC: Double?
    /// The `bext` time reference: frames since the zone's midnight at the first frame.
    public var timeReference: UInt64?
    /// Stretches of the file that are not what was heard, with their reasons.
    public var gaps: [Gap]?
    /// SHA-256 of the file's bytes as closed, hexadecimal.
    public var sha256: String?
    /// The file's size as closed, bytes.
    public var bytes: Int64?
    /// Its loudness (EBU Tech 3285's five figures, null where there is none).
    public var loudness: FileLoudness?
    /// Closed by a later run: the run that wrote it ended without closing it (killed).
    public var recovered: Bool?
    /// The start is estimated (a recovered file its run never listed:
    /// its time of modification less its length), not measured.
    public var startEstimated: Bool?
    /// How the start time was measured (closed lines the recorder wrote; nil in older manifests).
    public var timeBasis: TimeBasis?
    // Deleted: why and when.
    /// Why the file was deleted.
    public var reason: String?
    /// When it was deleted, UTC seconds since 1970.
    public var deletedUTC: Double?
    /// The link to the line before it (`ManifestChain`): SHA-256 of that line as written.
    public var previous: String?
    /// The fingerprint of the key that signed it (its signature ends the line).
    public var signingKey: String?

    enum CodingKeys: String, CodingKey {
        case event, path, index, startUTC = "start_utc", start, utcOffset = "utc_offset", sampleRate = "sample_rate",
             channels, device, inode, frames, endUTC = "end_utc", timeReference = "time_reference", gaps, sha256,
             bytes, loudness, recovered, startEstimated = "start_estimated", timeBasis = "time_basis", reason, deletedUTC = "deleted_utc",
             previous = "prev", signingKey = "signing_key"
    }

    /// UTC as ISO 8601 with milliseconds.
    public static func iso(_ utc: Double) -> String {
        RecordingTimeZone.utc.format("%Y-%m-%dT%H:%M:%S", at: (utc * 1000).rounded() / 1000)
            + String(format: ".%03dZ", Int(((utc * 1000).rounded()).truncatingRemainder(dividingBy: 1000)))
    }
}

/// A take's manifest beside its files: one `ManifestLine` per line, each
/// appended with one write and synced, so a crash leaves whole lines (a
/// torn last line, from a full disk or a power cut, is cut off when the
/// manifest is opened again). A restarted logger appends to the same
/// manifest; while one recorder writes it (an exclusive `flock`), no other
/// does. Each line is linked to the one before it, and signed when a key
/// is given (`ManifestChain`); `ManifestVerification` checks both.
public final class TakeManifest: Sendable {
    /// The manifest file.
    public let path: String
    /// What it lists now, kept small for a year of files: the closed files
    /// not deleted, the files opened and never closed, the highest index.
    private struct State {
        var closed: [String: ManifestLine] = [:]
        var openOnly: [String: ManifestLine] = [:]
        var highestIndex = 0

        mutating func apply(_ line: ManifestLine) {
            highestIndex = max(highestIndex, line.index)
            switch line.event {
            case .opened: openOnly[line.path] = line
            case .closed:
                openOnly[line.path] = nil
                closed[line.path] = line
            case .deleted:
                openOnly[line.path] = nil
                closed[line.path] = nil
            }
        }
    }
    /// What one writer at a time holds: the open file, what it lists, and
    /// the link the next line names (to the last whole line, set by `open()`).
    private struct Held {
        var descriptor: FileDescriptor?
        var state = State()
        var head = ManifestChain.firstLink
    }
    private let held: Mutex<Held>
    private let signingKey: ManifestSigningKey?

    /// Reads what the manifest at `path` lists (nothing if there is none
    /// yet); `open()` makes it writable, its lines signed with `signingKey` when one is given.
    public init(path: String, signingKey: ManifestSigningKey? = nil) {
        self.path = path
        self.signingKey = signingKey
        var listed = Held()
        for line in Self.read(path).lines { listed.state.apply(line) }
        held = Mutex(listed)
    }

    /// Whether a recorder is writing the manifest at `path` now.
    public static func isInUse(_ path: String) -> Bool {
        guard let probe = try? FileDescriptor.open(path, .readOnly, options: .closeOnExec) else { return false }
        defer { try? probe.close() }
        return flock(probe.rawValue, LOCK_EX | LOCK_NB) != 0
    }

    /// Creates the manifest if need be and holds it for this recorder
    /// (refused while another writes it); a torn last line is cut off.
    public func open() throws(RecordingError) {
        let opened: FileDescriptor
        do {
            opened = try FileDescriptor.open(path, .writeOnly, options: [.create, .append, .closeOnExec],
                                             permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw .unwritablePath(path: path, reason: "cannot open the take's manifest: " + Errno.of(error).sentence)
        }
        guard flock(opened.rawValue, LOCK_EX | LOCK_NB) == 0 else {
            try? opened.close()
            throw .outputBusy(path: path)
        }
        let written = ManifestChain.lines(of: FileManager.default.contents(atPath: path) ?? Data())
        if written.tornBytes > 0 {
            var info = stat()
            fstat(opened.rawValue, &info)
            ftruncate(opened.rawValue, info.st_size - off_t(written.tornBytes))
        }
        held.withLock {
            $0.descriptor = opened
            $0.head = written.lines.last.map(ManifestChain.link(to:)) ?? ManifestChain.firstLink
        }
    }

    deinit { held.withLock { try? $0.descriptor?.close() } }

    /// Every whole line of the manifest at `path`, and how many bytes of a torn last line follow them.
    public static func read(_ path: String) -> (lines: [ManifestLine], tornBytes: Int) {
        let written = ManifestChain.lines(of: FileManager.default.contents(atPath: path) ?? Data())
        let decoder = JSONDecoder()
        return (written.lines.compactMap { try? decoder.decode(ManifestLine.self, from: Data($0)) }, written.tornBytes)
    }

    /// The highest set index it lists (0: none): a restarted logger goes on from the next.
    public var highestIndex: Int { held.withLock { $0.state.highestIndex } }

    /// Files it lists as opened and never closed (a run that was killed).
    public var openedNeverClosed: [ManifestLine] {
        held.withLock { Array($0.state.openOnly.values) }.sorted { $0.startUTC < $1.startUTC }
    }

    /// Appends `line`, linked to the one before it and signed when the
    /// manifest has a key (one write, then fsync).
    public func append(_ line: ManifestLine) throws(RecordingError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var linked = line
        linked.signingKey = signingKey?.publicKey.fingerprint
        let failure: String? = held.withLock { held in
            guard let descriptor = held.descriptor else { return "it is not open" }
            linked.previous = held.head
            guard let data = try? encoder.encode(linked) else { return "it cannot be encoded" }
            var body = [UInt8](data)
            if let signingKey { body = ManifestChain.signed(body, signature: signingKey.signature(for: body)) }
            let bytes = body + [UInt8(ascii: "\n")]
            let written: Int
            do {
                written = try bytes.withUnsafeBytes { try descriptor.write($0) }
            } catch {
                return Errno.of(error).sentence
            }
            guard written == bytes.count else {
                // A torn line is cut off again at once.
                if written > 0 {
                    var info = stat()
                    fstat(descriptor.rawValue, &info)
                    ftruncate(descriptor.rawValue, info.st_size - off_t(written))
                }
                return "only \(written) of \(bytes.count) bytes written"
            }
            fsync(descriptor.rawValue)
            held.head = ManifestChain.link(to: body)
            held.state.apply(linked)
            return nil
        }
        if let failure { throw .file(path: path, reason: "cannot add to the take's manifest: \(failure)") }
    }

    /// The path as the manifest writes it: relative to its folder when inside it.
    func relative(_ file: String) -> String {
        let folder = Self.absolute((path as NSString).deletingLastPathComponent) + "/"
        let full = Self.absolute(file)
        return full.hasPrefix(folder) ? String(full.dropFirst(folder.count)) : full
    }

    /// A path the manifest lists, as a path to open.
    public func resolve(_ listed: String) -> String {
        listed.hasPrefix("/") ? listed : Self.absolute((path as NSString).deletingLastPathComponent) + "/" + listed
    }

    static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return (full as NSString).standardizingPath
    }

    /// The files it lists that are closed and not deleted, oldest first.
    public var closedFiles: [ManifestLine] {
        held.withLock { Array($0.state.closed.values) }.sorted { $0.startUTC < $1.startUTC }
    }

    /// The default manifest for an output pattern: in the pattern's folder
    /// before its first time field, named after the text before the first
    /// time field of the first name that has one, else the file's stem
    /// (`/srv/log/%Y-%m-%d/%H%M%S.wav` → `/srv/log/take.manifest.jsonl`;
    /// `/srv/studio-%Y%m%d/%H%M.wav` → `/srv/studio.manifest.jsonl`;
    /// `show-%Y%m%d.wav` → `show.manifest.jsonl`; `show.wav` → `show.manifest.jsonl`).
    public static func defaultPath(forPattern pattern: String) -> String {
        var components = (pattern as NSString).pathComponents
        let file = (components.removeLast() as NSString).deletingPathExtension
        let folder = components.prefix { !$0.contains("%") }
        let timed = (components + [file]).first { $0.contains("%") }
        var stem = timed.map { String($0.prefix { $0 != "%" }) } ?? file
        while let last = stem.last, "-_. ".contains(last) { stem.removeLast() }
        if stem.isEmpty { stem = "take" }
        let base = folder.isEmpty ? "" : NSString.path(withComponents: Array(folder))
        return (base.isEmpty ? "" : (base == "/" ? "/" : base + "/")) + stem + ".manifest.jsonl"
    }
}

/// A file's SHA-256 (libcrypto), read in blocks into one buffer.
public enum FileDigest {
    /// The file's SHA-256 in hexadecimal (nil: it cannot be read).
    public static func sha256(ofFile path: String) -> String? {
        guard let descriptor = try? FileDescriptor.open(path, .readOnly, options: .closeOnExec) else { return nil }
        defer { try? descriptor.close() }
        let hasher = SHA256Hasher()
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { block.deallocate() }
        while true {
            // An interrupted read is retried (swift-system's default).
            guard let count = try? descriptor.read(into: block) else { return nil }
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: block[..<count]))
        }
        return hasher.finalize().hex
    }
}
