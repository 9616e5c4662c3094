import ArgumentParser
import JackKit

/// `jas`: the command-line tool of JackAudioSession.
@main
struct JAS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jas",
        abstract: "Audio sessions on a JACK server: self-test, status, and tools for metering and recording.",
        subcommands: [Selftest.self, Status.self]
    )

    static func main() {
        // jas reports JACK failures itself, naming the server or port.
        LibraryMessages.silence()
        Self.main(nil)
    }
}
