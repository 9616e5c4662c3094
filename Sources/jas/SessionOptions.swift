import ArgumentParser
import JackAudioSession

/// `--category`, `--mode` and `--option`, shared by the commands that open a session.
struct SessionOptions: ParsableArguments {
    @Option(help: "The session's category.")
    var category: Category = .playback

    @Option(help: "The session's mode.")
    var mode: Mode = .default

    @Option(name: .customLong("option"), help: "Category option (repeatable).")
    var options: [CategoryOptionName] = []

    /// The category, mode and options.
    var resolved: (Category, Mode, CategoryOptions) {
        (category, mode, options.reduce(into: CategoryOptions()) { $0.formUnion($1.option) })
    }
}
