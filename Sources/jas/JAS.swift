import ArgumentParser
import Foundation
import JackKit

/// `jas`: the command-line tool of JackAudioSession.
@main
struct JAS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jas",
        abstract: "Audio sessions on a JACK server: self-test, latency, status, events, players, recording, meters, interruptions, devices, permissions.",
        version: "jas \(JAS.packageVersion) (JackAudioSession), libjack \(LibraryVersion.text)",
        subcommands: [Selftest.self, Latency.self, Status.self, Monitor.self, Play.self, Record.self, Meter.self, Interrupt.self, Sessions.self, Device.self, Permission.self]
    )

    /// The package's version.
    static let packageVersion = "0.13.0"

    static func main() async {
        // jas reports JACK failures itself, naming the server or port.
        LibraryMessages.silence()
        // A reader of stdout that goes away is noticed where the line is
        // written (Output.line), not by a signal that ends whichever thread
        // wrote (a recorder mid-take).
        signal(SIGPIPE, SIG_IGN)
        Output.watchReader()
        await Self.main(nil)
    }
}
