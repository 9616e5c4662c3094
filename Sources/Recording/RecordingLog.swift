import EventSchema
import Foundation
import Synchronization

/// The sidecar log next to a recording: one JSON object per line, written
/// and flushed as each event happens, so it survives a crash too.
final class RecordingLog: Sendable {
    let path: String?
    /// The file, written by one event at a time.
    private let handle: Mutex<FileHandle?>

    /// Creates (truncates) the log at `path`; nil: a take without a log
    /// file (to a device), whose events go only to its event stream.
    init(path: String?) throws(RecordingError) {
        self.path = path
        guard let path else {
            handle = Mutex(nil)
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let opened = FileHandle(forWritingAtPath: path) else {
            throw .unwritablePath(path: path, reason: "cannot create the recording's log file")
        }
        handle = Mutex(opened)
    }

    deinit { handle.withLock { try? $0?.close() } }

    /// Appends `event` with the wall-clock time.
    func append(_ event: RecordingEvent) {
        let line = EventEncoding.line(event, at: Date()) + "\n"
        handle.withLock { try? $0?.write(contentsOf: Data(line.utf8)) }
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
