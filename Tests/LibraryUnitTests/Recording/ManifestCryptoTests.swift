import Foundation
@testable import Recording
import XCTest

/// The manifest's hashes and signatures against published answers: SHA-256
/// of FIPS 180-2's "abc" and of nothing, a file's digest against coreutils'
/// `sha256sum` across the reader's block boundaries, and Ed25519 keys and
/// signatures against RFC 8032's test vectors 1 and 2 (section 7.1), read
/// from key files as `jas keygen` writes them. No server.
final class ManifestCryptoTests: XCTestCase {
    private func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    private func temporaryFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "jas-crypto-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    func testSHA256OfTheStandardsMessagesAndOfAFileAsSha256sumReadsIt() throws {
        XCTAssertEqual(ManifestChain.link(to: Array("abc".utf8)),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(ManifestChain.link(to: Data()),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // Data made of two regions hashes as its bytes in order.
        var joined = DispatchData.empty
        for piece in ["a", "bc"] { Array(piece.utf8).withUnsafeBytes { joined.append($0) } }
        XCTAssertEqual(ManifestChain.link(to: joined), ManifestChain.link(to: Array("abc".utf8)))

        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Just over two of the reader's 1 MiB blocks, every byte different from its neighbours'.
        let path = "\(folder)/take.wav"
        let content = (0..<((2 << 20) + 12345)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        try Data(content).write(to: URL(fileURLWithPath: path))
        let sha256sum = Process()
        sha256sum.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        sha256sum.arguments = [path]
        let output = Pipe()
        sha256sum.standardOutput = output
        try sha256sum.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        sha256sum.waitUntilExit()
        let expected = try XCTUnwrap(printed.split(separator: " ").first.map(String.init))
        XCTAssertEqual(expected.count, 64, printed)
        XCTAssertEqual(FileDigest.sha256(ofFile: path), expected)
        XCTAssertNil(FileDigest.sha256(ofFile: "\(folder)/missing.wav"))
    }

    func testEd25519KeysAndSignaturesAreRFC8032s() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let vectors: [(secret: String, public: String, message: String, signature: String)] = [
            ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
             "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
             "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
                + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
            ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
             "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
             "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
                + "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        ]
        for (number, vector) in vectors.enumerated() {
            let path = "\(folder)/vector-\(number + 1)"
            try Data("jas-manifest-ed25519-private \(Data(bytes(vector.secret)).base64EncodedString())\n".utf8)
                .write(to: URL(fileURLWithPath: path))
            let key = try ManifestSigningKey(contentsOf: path)
            let message = bytes(vector.message)
            XCTAssertEqual(Array(key.signature(for: message)), bytes(vector.signature), "vector \(number + 1)")
            // Its public half, written by the key and read back, checks the signature and nothing else.
            let written = "\(folder)/written-\(number + 1)"
            try key.write(to: written)
            let published = try String(contentsOfFile: written + ".pub", encoding: .utf8)
            XCTAssertEqual(published, "jas-manifest-ed25519-public \(Data(bytes(vector.public)).base64EncodedString())\n")
            let publicKey = try ManifestPublicKey(contentsOf: written + ".pub")
            XCTAssertEqual(publicKey.fingerprint, String(ManifestChain.link(to: bytes(vector.public)).prefix(16)))
            XCTAssertTrue(publicKey.isValid(Data(bytes(vector.signature)), for: message))
            var altered = bytes(vector.signature)
            altered[10] ^= 1
            XCTAssertFalse(publicKey.isValid(Data(altered), for: message))
            XCTAssertFalse(publicKey.isValid(Data(bytes(vector.signature)), for: message + [0]))
            XCTAssertFalse(publicKey.isValid(Data(bytes(vector.signature).prefix(63)), for: message))
        }
        // A new key signs what its public half then accepts; two new keys differ.
        let fresh = ManifestSigningKey(), other = ManifestSigningKey()
        XCTAssertNotEqual(fresh.publicKey.fingerprint, other.publicKey.fingerprint)
        let body = Array(#"{"event":"opened"}"#.utf8)
        XCTAssertTrue(fresh.publicKey.isValid(fresh.signature(for: body), for: body))
        XCTAssertFalse(other.publicKey.isValid(fresh.signature(for: body), for: body))
    }
}
