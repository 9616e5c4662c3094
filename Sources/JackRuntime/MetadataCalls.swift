import CJack
import Foundation
import Synchronization

/// libjack's metadata calls: one at a time in the process (they share one
/// database handle and are not thread-safe: two sessions in one process, each
/// on its own queue, crashed inside jack_get_property), each within a bound.
///
/// jackd2 keeps metadata in a Berkeley DB every JACK process of the user opens
/// (`/dev/shm/jack_db-UID`); a process killed inside a call can leave one of
/// its locks held, and every later call of every process waits on it for
/// ever. A call that has not returned within `bound` seconds marks the store
/// as not answering: it is said once, on stderr, with what to do, and every
/// later metadata call of this process answers "nothing" at once. The stuck
/// call's thread stays where libjack left it. Never used on the real-time thread.
public enum MetadataCalls {
    public static let bound: Double = 2
    private static let queue = DispatchQueue(label: "jackruntime.metadata")
    private static let stuck = Mutex<String?>(nil)

    /// Why metadata is not read any more in this process (nil while it answers).
    public static var notAnswering: String? { stuck.withLock { $0 } }

    /// Runs `body` on the metadata queue; nil when the store does not answer.
    static func run<T>(_ what: String, _ body: @escaping @Sendable () -> T?) -> T? {
        guard notAnswering == nil else { return nil }
        let outcome = CallOutcome<T>()
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        queue.async {
            // Not while a client opens or closes (see LibraryGlobals); the
            // bound below counts from when the call itself starts.
            let ran = LibraryGlobals.metadataCall(waitBound: ClientLifecycle.openBound + 5) { () -> T? in
                started.signal()
                return body()
            }
            if case let .some(value) = ran { outcome.value = value } else { started.signal() }
            finished.signal()
        }
        // An open or close that never ends is the lifecycle's to report.
        guard started.wait(timeout: .now() + ClientLifecycle.openBound + 10) == .success else { return nil }
        guard finished.wait(timeout: .now() + bound) == .success else {
            let store = "/dev/shm/jack_db-\(getuid())"
            let reason = "JACK's metadata store (\(store)) did not answer \(what) within \(Int(bound)) s"
            let first = stuck.withLock { current -> Bool in
                defer { current = current ?? reason }
                return current == nil
            }
            if first {
                let line = "jackkit: \(reason): a process killed inside a metadata call may hold its lock. Port groups, "
                    + "port types and pretty names are not read in this process from now on. To repair it: stop every "
                    + "JACK client and jackd, remove \(store), and start jackd again.\n"
                _ = try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
            }
            return nil
        }
        return outcome.value
    }

    private final class CallOutcome<T>: @unchecked Sendable { // written by the lane's closure before it signals, read by the caller only after
        var value: T?
    }
}
