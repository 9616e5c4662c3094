import ArgumentParser
import JackKit

/// `--server`, shared by the commands that work on a running JACK server.
/// (`latency` and `selftest` have their own: without it they start a private one.)
struct ServerOption: ParsableArguments {
    @Option(name: .customLong("server"), help: "The JACK server (default: $JACK_DEFAULT_SERVER or 'default').")
    var name: String?

    /// The name given, or the one libjack would use.
    var resolvedName: String { name ?? Client.defaultServerName }
}
