import Foundation

/// What checking a take's manifest found: its chain of lines (each names
/// the SHA-256 of the one before), their signatures when a public key is
/// given, and every file it lists as closed and not deleted, hashed again.
///
/// What it proves: each file still present is byte for byte the one the
/// recorder closed; no line was removed, moved or changed, except at the
/// end: lines cut off the end leave a shorter chain that is whole, which
/// only a copy of the manifest kept elsewhere (or the log) shows. With a
/// key, no line can have been written by anyone without the private key.
/// What it does not: that the audio was what the microphones heard, or
/// that the clock was right (the log says how it was measured).
public struct ManifestVerification: Sendable {
    /// What verification found: a problem, or a note that is not a failure.
    public struct Finding: Sendable, Equatable, CustomStringConvertible {
        /// What kind of finding it is.
        public enum Kind: String, Sendable {
            // Problems: the manifest or its files are not what the recorder wrote.
            /// A listed file's bytes differ from its hash, it is shorter or longer than it was closed.
            case fileAltered = "file_altered", fileTruncated = "file_truncated", fileGrown = "file_grown"
            /// A file listed as closed and not deleted is not there.
            case fileMissing = "file_missing"
            /// A line's link does not match the line before it, or a line is not a manifest line.
            case chainBroken = "chain_broken", lineUnreadable = "line_unreadable"
            /// A signature does not verify, a line after a signed one has none, or it was signed by another key.
            case signatureInvalid = "signature_invalid", lineUnsigned = "line_unsigned", otherKey = "other_key"
            // Notes: said, and not a failure.
            /// A file retention deleted as the manifest says, or one still being recorded.
            case deletedByRetention = "deleted_by_retention", beingRecorded = "being_recorded"
            /// A file opened and never closed (its run was killed), or lines written before the chain began.
            case neverClosed = "never_closed", beforeTheChain = "before_the_chain"
            /// Signed lines read without a key, or a last line cut short (a run killed while writing it).
            case signaturesNotChecked = "signatures_not_checked", tornLastLine = "torn_last_line"

            /// True for a problem, false for a note.
            public var isProblem: Bool {
                switch self {
                case .deletedByRetention, .beingRecorded, .neverClosed, .beforeTheChain, .signaturesNotChecked, .tornLastLine: false
                default: true
                }
            }
        }

        /// What kind of finding it is.
        public var kind: Kind
        /// The manifest line it concerns, counted from 1 (nil: none).
        public var line: Int?
        /// The file it concerns, as the manifest lists it (nil: none).
        public var path: String?
        /// What was found, in words.
        public var detail: String

        public var description: String {
            var place: [String] = []
            if let line { place.append("line \(line)") }
            if let path { place.append("'\(path)'") }
            return (kind.isProblem ? "problem" : "note") + ": " + (place.isEmpty ? "" : place.joined(separator: ", ") + ": ") + detail
        }
    }

    /// The manifest verified.
    public let manifestPath: String
    /// What was found, in the manifest's order.
    public private(set) var findings: [Finding] = []
    /// Lines read, files hashed again and found intact.
    public private(set) var lines = 0
    /// Files hashed again and found as they were closed.
    public private(set) var filesIntact = 0
    /// Lines whose signature the key confirmed.
    public private(set) var linesSigned = 0

    /// True when nothing found is a problem.
    public var intact: Bool { !findings.contains { $0.kind.isProblem } }
    /// The first line whose link or signature is wrong.
    public var firstBrokenLine: Int? {
        findings.filter { [.chainBroken, .signatureInvalid, .lineUnsigned, .otherKey, .lineUnreadable].contains($0.kind) }
            .compactMap(\.line).min()
    }

    /// Checks the manifest at `manifestPath` (refused when it cannot be read)
    /// and, with `key`, every line's signature.
    public init(manifestPath: String, key: ManifestPublicKey? = nil) throws(RecordingError) {
        self.manifestPath = manifestPath
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw .file(path: manifestPath, reason: "cannot read the manifest: " + String(cString: strerror(errno)))
        }
        let manifest = TakeManifest(path: manifestPath)
        let written = ManifestChain.lines(of: data)
        lines = written.lines.count
        let listed = checkChain(written.lines, key: key)
        if written.tornBytes > 0 {
            findings.append(Finding(kind: .tornLastLine, line: lines + 1, path: nil,
                                    detail: "\(written.tornBytes) bytes after the last whole line (a write cut short, by a crash or a full disk): not part of the manifest"))
        }
        checkFiles(listed, manifest: manifest)
    }

    /// Each line's link and signature; the lines that could be read, with their numbers.
    private mutating func checkChain(_ raw: [[UInt8]], key: ManifestPublicKey?) -> [(number: Int, line: ManifestLine)] {
        let decoder = JSONDecoder()
        var listed: [(Int, ManifestLine)] = []
        var chained = false
        var unchained = 0
        var signedButUnchecked = 0
        for (offset, bytes) in raw.enumerated() {
            let number = offset + 1
            let (body, signature) = ManifestChain.split(bytes)
            guard let line = try? decoder.decode(ManifestLine.self, from: Data(body)) else {
                findings.append(Finding(kind: .lineUnreadable, line: number, path: nil, detail: "not a manifest line (edited, or not JSON)"))
                chained = true
                continue
            }
            listed.append((number, line))
            let expected = offset == 0 ? ManifestChain.firstLink : ManifestChain.link(to: raw[offset - 1])
            switch line.previous {
            case nil where !chained:
                unchained += 1
            case nil:
                findings.append(Finding(kind: .chainBroken, line: number, path: line.path,
                                        detail: "it has no link to the line before it, where every line since line \(unchained + 1) has one: it was put in by hand"))
            case let link? where link != expected:
                chained = true
                let what = offset == 0 ? "it is not the manifest's first line: lines before it were removed"
                    : "the line before it is not the one it was written after: a line was removed, moved or changed before it"
                findings.append(Finding(kind: .chainBroken, line: number, path: line.path, detail: what))
            default:
                chained = true
            }
            guard let key else {
                if signature != nil { signedButUnchecked += 1 }
                continue
            }
            if let signature {
                if let fingerprint = line.signingKey, fingerprint != key.fingerprint {
                    findings.append(Finding(kind: .otherKey, line: number, path: line.path,
                                            detail: "signed by key \(fingerprint), not by the key given (\(key.fingerprint))"))
                } else if key.isValid(signature, for: body) {
                    linesSigned += 1
                } else {
                    findings.append(Finding(kind: .signatureInvalid, line: number, path: line.path,
                                            detail: "its signature does not match it: the line was changed after it was signed, or signed by another key"))
                }
            } else if line.previous != nil || chained {
                findings.append(Finding(kind: .lineUnsigned, line: number, path: line.path, detail: "it is not signed"))
            }
        }
        if unchained > 0 {
            findings.insert(Finding(kind: .beforeTheChain, line: nil, path: nil,
                                    detail: "lines 1–\(unchained) were written before manifests were chained (an older jas): their order and content are not proven"), at: 0)
        }
        if signedButUnchecked > 0 {
            findings.append(Finding(kind: .signaturesNotChecked, line: nil, path: nil,
                                    detail: "\(signedButUnchecked) line(s) are signed; give --key PUBLIC_KEY to check the signatures"))
        }
        return listed
    }

    /// Every file closed and not deleted, hashed again; the others said.
    private mutating func checkFiles(_ listed: [(number: Int, line: ManifestLine)], manifest: TakeManifest) {
        var closed: [String: (number: Int, line: ManifestLine)] = [:]
        var openOnly: [String: Int] = [:]
        for (number, line) in listed {
            switch line.event {
            case .opened: openOnly[line.path] = number
            case .closed:
                openOnly[line.path] = nil
                closed[line.path] = (number, line)
            case .deleted:
                openOnly[line.path] = nil
                closed[line.path] = nil
                findings.append(Finding(kind: .deletedByRetention, line: number, path: line.path,
                                        detail: "deleted by the logger" + (line.reason.map { ": \($0)" } ?? "")))
            }
        }
        let recording = TakeManifest.isInUse(manifestPath)
        for (path, number) in openOnly.sorted(by: { $0.value < $1.value }) {
            findings.append(recording
                ? Finding(kind: .beingRecorded, line: number, path: path, detail: "being recorded now: it is checked once it is closed")
                : Finding(kind: .neverClosed, line: number, path: path,
                          detail: "opened and never closed (its run was killed; the logger's next run closes it): not checked"))
        }
        for (path, entry) in closed.sorted(by: { $0.value.number < $1.value.number }) {
            if let finding = Self.check(manifest.resolve(path), listed: entry.line) {
                findings.append(Finding(kind: finding.kind, line: entry.number, path: path, detail: finding.detail))
            } else {
                filesIntact += 1
            }
        }
    }

    /// A closed file against its line: nil when it is the file the recorder closed.
    private static func check(_ file: String, listed: ManifestLine) -> (kind: Finding.Kind, detail: String)? {
        var info = stat()
        guard stat(file, &info) == 0 else {
            return (.fileMissing, "missing, and no line says the logger deleted it")
        }
        let bytes = Int64(info.st_size)
        if let expected = listed.bytes, bytes != expected {
            return bytes < expected ? (.fileTruncated, "truncated: \(bytes) bytes of the \(expected) it was closed with")
                : (.fileGrown, "grown: \(bytes) bytes where it was closed with \(expected)")
        }
        guard let expected = listed.sha256 else {
            return (.fileAltered, "its line has no SHA-256 to check it against")
        }
        guard let digest = FileDigest.sha256(ofFile: file) else {
            return (.fileMissing, "cannot be read: " + String(cString: strerror(errno)))
        }
        guard digest == expected else {
            return (.fileAltered, "altered: its SHA-256 is \(digest), the recorder closed it with \(expected)")
        }
        return nil
    }
}
