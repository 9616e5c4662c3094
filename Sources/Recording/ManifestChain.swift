import Foundation
import JackRuntime
import SystemPackage

/// The links that make a take's manifest tamper-evident. Each line names
/// the SHA-256 of the line before it as written (`prev`; the first line
/// names 64 zeros), so a line removed, moved or edited breaks the link of
/// the line after it. A recorder given a signing key also ends each line
/// with an Ed25519 signature of the line's bytes before it
/// (`,"signature":"BASE64"}`), and names the key (`signing_key`, its
/// fingerprint): without the private key, an edited line cannot be signed
/// again, even when every later link is recomputed.
public enum ManifestChain {
    /// What the first line of a manifest names as the line before it.
    public static let firstLink = String(repeating: "0", count: 64)

    /// The link to a line: SHA-256 of its bytes as written, without the newline.
    public static func link(to line: some DataProtocol) -> String {
        SHA256Hasher.hash(line).hex
    }

    private static let signatureField = Array(#","signature":""#.utf8)

    /// A line's signed bytes followed by its signature, as written.
    static func signed(_ body: [UInt8], signature: Data) -> [UInt8] {
        guard body.last == UInt8(ascii: "}") else { return body }
        return body.dropLast() + signatureField + Array(signature.base64EncodedString().utf8) + Array(#""}"#.utf8)
    }

    /// A line as written, split into the bytes its signature covers and the
    /// signature (nil: the line is not signed).
    public static func split(_ line: [UInt8]) -> (body: [UInt8], signature: Data?) {
        guard line.count > signatureField.count + 2, line.suffix(2).elementsEqual(Array(#""}"#.utf8)),
              let start = lastRange(of: signatureField, in: line) else { return (line, nil) }
        let encoded = line[(start + signatureField.count)..<(line.count - 2)]
        guard let signature = Data(base64Encoded: Data(encoded)) else { return (line, nil) }
        return (Array(line[..<start]) + [UInt8(ascii: "}")], signature)
    }

    private static func lastRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in stride(from: haystack.count - needle.count, through: 0, by: -1)
            where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }

    /// The whole lines of a manifest file's bytes (without their newlines),
    /// and the bytes of a torn last line after them.
    public static func lines(of data: Data) -> (lines: [[UInt8]], tornBytes: Int) {
        let bytes = [UInt8](data)
        var lines: [[UInt8]] = []
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            if index > start { lines.append(Array(bytes[start..<index])) }
            start = index + 1
        }
        return (lines, bytes.count - start)
    }
}

extension Sequence where Element == UInt8 {
    /// Lower-case hexadecimal.
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}

/// An Ed25519 key pair for signing manifests (libcrypto), kept as one
/// line of text per file: `jas-manifest-ed25519-private BASE64` (the
/// 32-byte seed; the file is the owner's only) and its public half
/// `jas-manifest-ed25519-public BASE64` in `NAME.pub`.
public struct ManifestSigningKey: Sendable {
    /// The private key: its 32-byte seed.
    private let seed: [UInt8]
    /// The public half, for `jas verify --key`.
    public let publicKey: ManifestPublicKey
    static let privateLabel = "jas-manifest-ed25519-private"

    /// A new key pair from the system's random source.
    public init() {
        seed = Ed25519.newSeed()
        guard let raw = Ed25519.publicKey(ofSeed: seed) else { fatalError("libcrypto refused a new Ed25519 key") }
        publicKey = ManifestPublicKey(raw: raw)
    }

    /// Reads the private key at `path`; the error names the file and what is wrong with it.
    public init(contentsOf path: String) throws(RecordingError) {
        seed = [UInt8](try KeyFile.read(path, label: Self.privateLabel, half: "private"))
        guard let raw = Ed25519.publicKey(ofSeed: seed) else {
            throw .file(path: path, reason: "not an Ed25519 private key: libcrypto refused it")
        }
        publicKey = ManifestPublicKey(raw: raw)
    }

    /// Writes the pair: the private key at `path` (mode 0600), the public at `path.pub`. Never replaces a file.
    public func write(to path: String) throws(RecordingError) {
        if FileManager.default.fileExists(atPath: path + ".pub") {
            throw .file(path: path + ".pub", reason: "it exists; keys are never replaced: choose another name")
        }
        try KeyFile.write(Self.privateLabel, Data(seed), to: path, mode: 0o600)
        try KeyFile.write(ManifestPublicKey.label, Data(publicKey.raw), to: path + ".pub", mode: 0o644)
    }

    func signature(for body: [UInt8]) -> Data {
        // Ed25519 signing fails only for a key it cannot use, which a loaded key is not.
        Data(Ed25519.signature(of: body, seed: seed) ?? [])
    }
}

/// The public half of a `ManifestSigningKey`: what `jas verify --key` checks signatures with.
public struct ManifestPublicKey: Sendable {
    /// Its 32 bytes.
    let raw: [UInt8]
    static let label = "jas-manifest-ed25519-public"

    init(raw: [UInt8]) { self.raw = raw }

    /// Reads a public key file (`NAME.pub`); throws naming the file when it is not one.
    public init(contentsOf path: String) throws(RecordingError) {
        raw = [UInt8](try KeyFile.read(path, label: Self.label, half: "public"))
    }

    /// The key's name in the lines it signs: the first 16 hex digits of the SHA-256 of its 32 bytes.
    public var fingerprint: String { String(SHA256Hasher.hash(raw).hex.prefix(16)) }

    /// True when `signature` is this key's Ed25519 signature of `body`.
    public func isValid(_ signature: Data, for body: [UInt8]) -> Bool {
        Ed25519.isValid([UInt8](signature), of: body, publicKey: raw)
    }
}

/// One key in a one-line text file: a label, a space, base64.
private enum KeyFile {
    static func read(_ path: String, label: String, half: String) throws(RecordingError) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .file(path: path, reason: "cannot read the \(half) key: " + String(cString: strerror(errno)))
        }
        let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, fields[0] == label, let raw = Data(base64Encoded: String(fields[1])), raw.count == 32 else {
            let other = fields.first.map(String.init) == (label.hasSuffix("public") ? ManifestSigningKey.privateLabel : ManifestPublicKey.label)
            throw .file(path: path, reason: other
                ? "this is the other half of the pair; give the \(half) key (jas keygen wrote both)"
                : "not a \(half) key 'jas keygen' wrote (one line: '\(label) BASE64')")
        }
        return raw
    }

    static func write(_ label: String, _ raw: Data, to path: String, mode: mode_t) throws(RecordingError) {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                                           permissions: FilePermissions(rawValue: mode))
        } catch {
            let failure = Errno.of(error)
            throw .file(path: path, reason: failure == .fileExists ? "it exists; keys are never replaced: choose another name"
                                                                   : failure.sentence)
        }
        do {
            try file.closeAfter {
                _ = try file.writeAll("\(label) \(raw.base64EncodedString())\n".utf8)
                guard fsync(file.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
        } catch {
            throw .file(path: path, reason: "cannot write the key: " + Errno.of(error).sentence)
        }
    }
}
