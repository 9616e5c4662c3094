import Foundation

/// Where the library keeps what a user decides or measures:
/// `$XDG_CONFIG_HOME/jackaudiosession/NAME`, or `~/.config/jackaudiosession/NAME`.
///
/// A file that exists but cannot be read as what it should hold is never
/// written over (it may hold decisions or measurements nobody else has): it
/// reads as empty, and a change to it fails with `Damaged`, naming the file.
enum ConfigurationFile {
    static func path(_ name: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.config")
        return base + "/jackaudiosession/" + name
    }

    /// A file that exists and does not hold what it should.
    struct Damaged: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String {
            "'\(path)' cannot be read (\(reason)); it was left as it is: repair it, or move it away to start afresh"
        }
    }

    /// The value in `path`: nil when there is no file.
    static func read<Value: Decodable>(_ type: Value.Type, from path: String) throws(Damaged) -> Value? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Damaged(path: path, reason: "not readable")
        }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw Damaged(path: path, reason: "not the JSON expected: \(String(describing: error).prefix(160))")
        }
    }

    /// Why `path` cannot be read as a `Value` (nil when it can, or does not exist).
    static func damage<Value: Decodable>(of path: String, as type: Value.Type) -> String? {
        do {
            _ = try read(type, from: path)
            return nil
        } catch {
            return error.description
        }
    }

    /// Writes `value` to `path` atomically (its folder made if need be).
    static func write<Value: Encodable>(_ value: Value, to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(value).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
