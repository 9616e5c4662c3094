import CLibCrypto
import Foundation

/// SHA-256 through the system's libcrypto (OpenSSL's EVP interface), fed in pieces.
final class SHA256Hasher {
    private let context: OpaquePointer

    init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("libcrypto could not start a SHA-256 digest")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    func update(_ bytes: some DataProtocol) {
        for region in bytes.regions { region.withUnsafeBytes { update($0) } }
    }

    /// The 32 bytes of the digest; the hasher is spent.
    func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return digest
    }

    static func hash(_ bytes: some DataProtocol) -> [UInt8] {
        let hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }
}

/// Ed25519 (RFC 8032) through the system's libcrypto: a key is its 32-byte
/// seed, a public key its 32 bytes, a signature 64 bytes.
enum Ed25519 {
    static let keyBytes = 32

    /// A new random seed, from libcrypto's generator.
    static func newSeed() -> [UInt8] {
        var seed = [UInt8](repeating: 0, count: keyBytes)
        guard RAND_bytes(&seed, Int32(keyBytes)) == 1 else { fatalError("libcrypto's random generator failed") }
        return seed
    }

    /// The public key of `seed`; nil when libcrypto refuses the seed.
    static func publicKey(ofSeed seed: [UInt8]) -> [UInt8]? {
        withPrivateKey(seed) { key in
            var raw = [UInt8](repeating: 0, count: keyBytes)
            var length = keyBytes
            guard EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1, length == keyBytes else { return nil }
            return raw
        } ?? nil
    }

    /// The signature of `message` by `seed`'s key; nil when libcrypto refuses.
    static func signature(of message: [UInt8], seed: [UInt8]) -> [UInt8]? {
        withPrivateKey(seed) { key in
            guard let context = EVP_MD_CTX_new() else { return nil }
            defer { EVP_MD_CTX_free(context) }
            var signature = [UInt8](repeating: 0, count: 64)
            var length = signature.count
            guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1,
                  EVP_DigestSign(context, &signature, &length, message, message.count) == 1, length == 64 else { return nil }
            return signature
        } ?? nil
    }

    /// Whether `signature` is `publicKey`'s of `message`.
    static func isValid(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == keyBytes,
              let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, keyBytes) else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        return EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1
            && EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }

    private static func withPrivateKey<T>(_ seed: [UInt8], _ body: (OpaquePointer) -> T) -> T? {
        guard seed.count == keyBytes, let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, keyBytes) else {
            return nil
        }
        defer { EVP_PKEY_free(key) }
        return body(key)
    }
}
