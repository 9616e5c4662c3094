import Foundation
import SystemPackage

/// Wakes a session when another session's file in the registry changes: an
/// inotify watch on the server's folder. A state published (a file renamed
/// into place), withdrawn (removed), or let go of because its process died
/// (the kernel closes the file it held open for writing: `IN_CLOSE_WRITE`,
/// SIGKILL included) each call `changed` on `queue`, a burst of them once.
/// The session's own file is not watched. Without inotify (the per-user limit
/// of instances reached) `isWatching` is false and the caller polls instead.
final class RegistryWatch: @unchecked Sendable { // the dispatch source is made in init and only cancelled after; its handler runs on one queue
    private let source: DispatchSourceRead?
    private let ownFile: String

    init(registry: SessionRegistry, ownFile: String, queue: DispatchQueue, changed: @escaping @Sendable () -> Void) {
        self.ownFile = ownFile
        try? registry.prepare()
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        let mask = UInt32(IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE | IN_DELETE_SELF)
        guard inotify >= 0 else {
            source = nil
            return
        }
        let fd = FileDescriptor(rawValue: inotify)
        guard inotify_add_watch(fd.rawValue, registry.directory, mask) >= 0 else {
            try? fd.close()
            source = nil
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd.rawValue, queue: queue)
        source.setEventHandler { [ownFile] in
            let (any, closed) = Self.drain(fd, ignoring: ownFile)
            guard any else { return }
            changed()
            // The kernel reports a dying process's file closed just before it
            // drops the process's lock on it (fsnotify_close comes before
            // locks_remove_file in __fput): a look made at once can still find
            // it locked. Look again a little later, twice.
            if closed {
                queue.asyncAfter(deadline: .now() + 0.002, execute: changed)
                queue.asyncAfter(deadline: .now() + 0.020, execute: changed)
            }
        }
        source.setCancelHandler { try? fd.close() }
        source.resume()
        self.source = source
    }

    deinit { source?.cancel() }

    /// Whether changes are seen as they happen.
    var isWatching: Bool { source != nil }

    /// Reads every pending event: whether any concerned another session's
    /// file, and whether one of those was a file closed after writing.
    private static func drain(_ fd: FileDescriptor, ignoring ownFile: String) -> (any: Bool, closed: Bool) {
        var any = false, closed = false
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            guard let count = try? buffer.withUnsafeMutableBytes({ try fd.read(into: $0) }), count > 0 else {
                return (any, closed)
            }
            // Half-written files (".writing-…") are not states yet.
            for event in InotifyEvents.parse(buffer.prefix(count)) where event.name != ownFile && !event.name.hasPrefix(".") {
                any = true
                if event.mask & UInt32(IN_CLOSE_WRITE) != 0 { closed = true }
            }
        }
    }
}
