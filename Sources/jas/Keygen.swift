import ArgumentParser
import Foundation
import Recording

/// `jas keygen`: a key pair for signing manifests.
struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make an Ed25519 key pair for signing a logger's manifest (jas record --sign-key, jas verify --key).",
        discussion: """
            Writes the private key to the path given (readable by you only: keep it on the logger, and \
            nowhere else) and the public key beside it with .pub added (give it to whoever checks the \
            records). Never replaces a file.
            """
    )

    @Option(help: "Where to write the private key, e.g. /etc/jas/manifest.key (the public key goes to /etc/jas/manifest.key.pub).")
    var output: String

    func run() throws {
        let pair = ManifestSigningKey()
        do {
            try pair.write(to: output)
        } catch {
            Output.diagnostic("jas keygen: \(Output.reason(error))")
            throw ExitCode(2)
        }
        Output.line("wrote the private key to '\(Output.safe(output))' (mode 0600: keep it secret) and the public key to "
                    + "'\(Output.safe(output)).pub'; key \(pair.publicKey.fingerprint)")
    }
}
