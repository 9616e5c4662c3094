import Foundation
import JackRuntime
import Synchronization
import SystemPackage

/// The files a take writes (its sound files and its log), claimed before
/// anything is created or truncated, and held until the take is finished:
/// an existing file is never replaced unless asked (`overwrite`), and two
/// recorders never write the same file (each holds an exclusive `flock` on
/// every file it writes; the second is refused, naming the file).
final class OutputClaim: Sendable {
    /// The claimed files' descriptors, each closed once, when its file is let go.
    private let descriptors: Mutex<[(path: String, descriptor: FileDescriptor)]>
    /// The files the claim created (they did not exist before).
    private let created: [String]

    private init(descriptors: [(path: String, descriptor: FileDescriptor)], created: [String]) {
        self.descriptors = Mutex(descriptors)
        self.created = created
    }

    deinit { release() }

    /// Claims `paths` (the sound files; a FIFO among them is written as it
    /// is, not claimed) and `logPath` (nil: a later part, whose log is the take's).
    static func claim(paths: [String], logPath: String?, overwrite: Bool) throws(RecordingError) -> OutputClaim {
        if let logPath, let same = paths.first(where: { $0 == logPath }) {
            throw .logNameClash(path: same)
        }
        var claimed: [(path: String, descriptor: FileDescriptor)] = []
        var created: [String] = []
        func giveUp(_ error: RecordingError) -> RecordingError {
            claimed.forEach { try? $0.descriptor.close() }
            created.forEach { unlink($0) }
            return error
        }
        // Everything is looked at before anything is created.
        let files = paths + (logPath.map { [$0] } ?? [])
        for path in files {
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let kind = info.st_mode & S_IFMT
            if kind == S_IFDIR { throw .unwritablePath(path: path, reason: "it is a folder") }
            if kind == S_IFIFO && path != logPath { continue }
            if !overwrite {
                throw .outputExists(path: path, isSymbolicLink: kind == S_IFLNK)
            }
        }
        for path in files {
            var info = stat()
            if stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO && path != logPath { continue }
            // Without --overwrite the file must still not exist (another recorder may have made it since the look).
            let existed = access(path, F_OK) == 0
            let options: FileDescriptor.OpenOptions = overwrite ? [.create, .closeOnExec] : [.create, .closeOnExec, .exclusiveCreate, .noFollow]
            let descriptor: FileDescriptor
            do {
                descriptor = try FileDescriptor.open(path, .writeOnly, options: options, permissions: [.ownerReadWrite, .groupRead, .otherRead])
            } catch {
                let reason = Errno.of(error) == .fileExists ? "it was created by another program a moment ago" : Errno.of(error).sentence
                throw giveUp(.unwritablePath(path: path, reason: reason))
            }
            claimed.append((path, descriptor))
            if !existed { created.append(path) }
            guard flock(descriptor.rawValue, LOCK_EX | LOCK_NB) == 0 else {
                throw giveUp(.outputBusy(path: path))
            }
        }
        return OutputClaim(descriptors: claimed, created: created)
    }

    /// The take did not start after all: the files the claim created go too.
    func abandon() {
        release()
        created.forEach { unlink($0) }
    }

    /// Lets go of the files (the take is finished).
    func release() { release { _ in true } }

    /// Lets go of `paths` (their set is closed: retention may delete them,
    /// and a deleted file's room comes back only once nothing holds it open).
    func release(paths: [String]) { release { paths.contains($0) } }

    private func release(where chosen: (String) -> Bool) {
        descriptors.withLock { descriptors in
            for (path, descriptor) in descriptors where chosen(path) { try? descriptor.close() }
            descriptors.removeAll { chosen($0.path) }
        }
    }
}
