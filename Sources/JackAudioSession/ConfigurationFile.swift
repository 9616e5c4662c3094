import Foundation
import JackRuntime
import SystemPackage

/// Where the library keeps what a user decides or measures:
/// `$XDG_CONFIG_HOME/jackaudiosession/NAME`, or `~/.config/jackaudiosession/NAME`
/// (a relative `XDG_CONFIG_HOME` is ignored, as the XDG Base Directory
/// specification says: it would name a different file in every working folder).
///
/// A file that exists but cannot be read as what it should hold is never
/// written over (it may hold decisions or measurements nobody else has): it
/// reads as empty, and a change to it fails with `Damaged`, naming the file.
enum ConfigurationFile {
    static func path(_ name: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? ((environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()) + "/.config")
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

    /// A file that cannot be written where it belongs.
    struct Unwritable: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String {
            "cannot write '\(path)': \(reason); make that folder writable, or point XDG_CONFIG_HOME at one that is"
        }
    }

    /// Writes `value` to `path` atomically (written beside it, then renamed
    /// over it), its folders made if need be (private to the user).
    static func write<Value: Encodable>(_ value: Value, to path: String) throws(Unwritable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(value) } catch { throw Unwritable(path: path, reason: "\(error)") }
        try makeFolders(of: path)
        let temporary = path + ".tmp-\(getpid())"
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .truncate, .closeOnExec],
                                           permissions: .ownerReadWrite)
        } catch {
            throw Unwritable(path: path, reason: Errno.of(error).sentence)
        }
        let failure: Errno?
        do {
            _ = try file.closeAfter {
                _ = try file.writeAll(data)
                guard fsync(file.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
            failure = nil
        } catch {
            failure = Errno.of(error)
        }
        if let failure {
            unlink(temporary)
            throw Unwritable(path: path, reason: failure.sentence)
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Unwritable(path: path, reason: reason)
        }
    }

    /// Makes every missing folder above `path`, naming the one that is in the way.
    private static func makeFolders(of path: String) throws(Unwritable) {
        var folder = ""
        for component in path.split(separator: "/").dropLast() {
            folder += "/" + component
            var status = stat()
            if stat(folder, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFDIR else {
                    throw Unwritable(path: path, reason: "'\(folder)' is a file, not a folder")
                }
                continue
            }
            guard mkdir(folder, 0o700) == 0 || errno == EEXIST else {
                throw Unwritable(path: path, reason: "cannot make the folder '\(folder)': \(String(cString: strerror(errno)))")
            }
        }
    }
}
