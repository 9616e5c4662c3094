import Foundation

/// Where the library keeps what a user decides or measures:
/// `$XDG_CONFIG_HOME/jackaudiosession/NAME`, or `~/.config/jackaudiosession/NAME`.
enum ConfigurationFile {
    static func path(_ name: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.config")
        return base + "/jackaudiosession/" + name
    }
}
