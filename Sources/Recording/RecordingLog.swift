import EventSchema
import Foundation

/// The sidecar log next to a recording: one JSON object per line, written
/// and flushed as each event happens, so it survives a crash too.
final class RecordingLog: @unchecked Sendable { // the file handle is written only behind `lock`
    let path: String?
    private let lock = NSLock()
    private let handle: FileHandle?

    /// Creates (truncates) the log at `path`; nil: a take without a log
    /// file (to a device), whose events go only to its event stream.
    init(path: String?) throws(RecordingError) {
        self.path = path
        guard let path else {
            handle = nil
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw .unwritablePath(path: path, reason: "cannot create the recording's log file")
        }
        self.handle = handle
    }

    deinit { try? handle?.close() }

    /// Appends `event` with the wall-clock time.
    func append(_ event: RecordingEvent) {
        let line = EventEncoding.line(event, at: Date()) + "\n"
        lock.lock()
        defer { lock.unlock() }
        try? handle?.write(contentsOf: Data(line.utf8))
    }

    /// The sidecar path for a recording at `outputPath`: its extension
    /// replaced by `.log`; nil when the output is a device (`/dev/null`, a
    /// sound card's node, anything in `/dev`), beside which no file belongs.
    static func path(for outputPath: String) -> String? {
        var info = stat()
        if stat(outputPath, &info) == 0, [S_IFCHR, S_IFBLK].contains(info.st_mode & S_IFMT) { return nil }
        let folder = ((outputPath as NSString).standardizingPath as NSString).deletingLastPathComponent
        if folder == "/dev" || folder.hasPrefix("/dev/") { return nil }
        return (outputPath as NSString).deletingPathExtension + ".log"
    }
}
