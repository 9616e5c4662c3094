import ArgumentParser
import Foundation
import Recording

/// `jas verify`: proves a logged take is what the recorder wrote.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that a logged take's files and manifest are as the recorder wrote them.",
        discussion: """
            Every line of the manifest names the SHA-256 of the line before it: a line removed, moved \
            or edited breaks the chain. Every file the manifest lists as closed is hashed again and must \
            be byte for byte the file the recorder closed; a file the logger deleted itself (--keep, \
            --min-free: the manifest says so) is not a problem. With --key, every line must carry a valid \
            signature by the private key the recorder was given (jas record --sign-key): no line was written \
            or changed without it. Lines cut off the end of the manifest leave a shorter chain that is whole: \
            keep a copy of the manifest elsewhere, or sign it, to prove the end too. \
            Exit status: 0 intact, 1 a problem found (each named), 2 the manifest or key cannot be read.
            """
    )

    @Argument(help: "The take's manifest, e.g. /srv/log/log.manifest.jsonl.")
    var manifest: String

    @Option(help: "The public key (KEY.pub from 'jas keygen') whose signatures every line must carry.")
    var key: String?

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func run() throws {
        let publicKey: ManifestPublicKey?
        do {
            publicKey = try key.map { path throws(RecordingError) in try ManifestPublicKey(contentsOf: path) }
        } catch {
            Output.diagnostic("jas verify: --key: \(Output.reason(error))")
            throw ExitCode(2)
        }
        guard FileManager.default.fileExists(atPath: manifest) else {
            Output.diagnostic("jas verify: no manifest at '\(Output.safe(manifest))'; give the .manifest.jsonl file jas record wrote beside the take")
            throw ExitCode(2)
        }
        let result: ManifestVerification
        do {
            result = try ManifestVerification(manifestPath: manifest, key: publicKey)
        } catch {
            Output.diagnostic("jas verify: \(Output.reason(error))")
            throw ExitCode(2)
        }
        if json {
            Output.jsonEvent(VerificationLine(result, key: publicKey))
        } else {
            var summary = "'\(Output.safe(manifest))': \(result.lines) lines, \(result.filesIntact) file(s) intact"
            if let publicKey { summary += ", \(result.linesSigned) line(s) signed by key \(publicKey.fingerprint)" }
            Output.line(summary)
            for finding in result.findings { Output.line(Output.safe(finding.description)) }
            let problems = result.findings.filter(\.kind.isProblem).count
            Output.line(result.intact ? "intact"
                : "NOT INTACT: \(problems) problem(s)" + (result.firstBrokenLine.map { "; the first broken line is \($0)" } ?? ""))
        }
        if !result.intact { throw ExitCode.failure }
    }
}

/// What `jas verify --json` wrote.
struct VerificationLine: Encodable {
    var event = "verified"
    let manifest: String
    let intact: Bool
    let lines: Int
    let filesIntact: Int
    let linesSigned: Int
    let key: String?
    let firstBrokenLine: Int?
    let findings: [Finding]

    struct Finding: Encodable {
        let kind: String
        let problem: Bool
        let line: Int?
        let path: String?
        let detail: String
    }

    init(_ result: ManifestVerification, key: ManifestPublicKey?) {
        manifest = result.manifestPath
        intact = result.intact
        lines = result.lines
        filesIntact = result.filesIntact
        linesSigned = result.linesSigned
        self.key = key?.fingerprint
        firstBrokenLine = result.firstBrokenLine
        findings = result.findings.map {
            Finding(kind: $0.kind.rawValue, problem: $0.kind.isProblem, line: $0.line, path: $0.path, detail: $0.detail)
        }
    }
}
