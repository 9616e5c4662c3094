import ArgumentParser
import Foundation
import JackKit
import JackRuntime

/// `jas`: the command-line tool of JackAudioSession.
@main
struct JAS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jas",
        abstract: "Audio sessions on a JACK server: self-test, latency, an audio analyzer, status, events, players, recording, meters, interruptions, devices, permissions.",
        version: "jas \(JAS.packageVersion) (JackAudioSession), libjack \(LibraryVersion.text)",
        subcommands: [Selftest.self, Latency.self, Analyze.self, Status.self, Monitor.self, Play.self, Record.self, Meter.self, Interrupt.self, Sessions.self, Device.self, Permission.self, MetadataStoreCommand.self, Extract.self, Verify.self, Keygen.self, Report.self]
    )

    /// The package's version.
    static let packageVersion = "0.13.0"

    static func main() async {
        // Before anything opens a descriptor: those jas was given, a restart passes on.
        ProcessRestart.noteInheritedDescriptors()
        // Before anything starts a thread: signals sent while jas starts wait.
        Signals.takeOver()
        // jas reports JACK failures itself, naming the server or port.
        LibraryMessages.silence()
        // A reader of stdout that goes away is noticed where the line is
        // written (Output.line), not by a signal that ends whichever thread
        // wrote (a recorder mid-take).
        signal(SIGPIPE, SIG_IGN)
        Output.watchReader()
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "help", let problem = unknownHelpTopic(Array(arguments.dropFirst())) {
            Output.diagnostic("jas help: " + problem)
            _exit(64)
        }
        await run(arguments)
    }

    /// Parses and runs the command as `main` would, except that a command
    /// that fails once libjack is wedged in this process (an open or a
    /// close that never returned, on whatever path) leaves the way a wedge
    /// must: started again where the server registry was replaced, otherwise
    /// with `WedgeWatch.exitStatus` for its supervisor, not with the usage
    /// or failure status its own error would give. A wedge on a lock of the
    /// metadata store keeps the command's own error and status.
    static func run(_ arguments: [String]) async {
        let command: any ParsableCommand
        do { command = try parseAsRoot(arguments) } catch { exit(withError: error) }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch {
            // A wedge on a lock of the metadata store is the user's to
            // repair, not a restart's: the command's own error names the
            // store and the repair, with its own status (2).
            if ClientLifecycle.shared.wedgedOnLock == nil {
                WedgeWatch.leaveIfWedged(command: type(of: command)._commandName)
            }
            exit(withError: error)
        }
    }

    /// `jas help WORDS…` for a command that does not exist: what to say
    /// (ArgumentParser would print the top-level help and exit 0, as if the
    /// command were there).
    static func unknownHelpTopic(_ words: [String]) -> String? {
        var command: any ParsableCommand.Type = JAS.self
        var path = "jas"
        for word in words where !word.hasPrefix("-") {
            let subcommands = command.configuration.subcommands
            guard let next = subcommands.first(where: { $0._commandName == word }) else {
                let names = subcommands.map { $0._commandName }
                guard !names.isEmpty else { return "'\(path)' has no subcommands; see 'jas help \(path.dropFirst(4))'" }
                return "no command '\(Output.safe(word))' in '\(path)'; the commands are: \(names.joined(separator: ", "))"
            }
            command = next
            path += " " + word
        }
        return nil
    }
}
