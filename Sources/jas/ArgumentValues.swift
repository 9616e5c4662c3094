import ArgumentParser
import JackAudioSession
import Metering
import Recording

// The library's value types as command-line values: ArgumentParser parses
// them, refuses anything else naming the values it takes, and lists them in
// `--help`, the man page and the shell completions.
extension Category: ExpressibleByArgument {}
extension Mode: ExpressibleByArgument {}
extension AudioSession.Priority: ExpressibleByArgument {}
extension AudioSessionPort: ExpressibleByArgument {}
extension ChannelLayout: ExpressibleByArgument {}
extension RecordingFormat.Container: ExpressibleByArgument {}
extension RecordingFormat.SampleFormat: ExpressibleByArgument {}

/// One `--option` value: a category option by AVAudioSession's name.
struct CategoryOptionName: ExpressibleByArgument {
    let option: CategoryOptions

    init?(argument: String) {
        guard let option = CategoryOptions(name: argument) else { return nil }
        self.option = option
    }

    static var allValueStrings: [String] { CategoryOptions.named.map(\.name) }
}
