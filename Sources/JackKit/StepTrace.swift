import CJack
import Glibc

/// The steps of opening, closing and reconnecting, with the monotonic time
/// (ms) and the thread, appended to the file `$JACKKIT_TRACE` names: for
/// finding where a comeback's time goes. Off (one load of a constant) unless set.
public enum StepTrace {
    private static let descriptor: Int32 = {
        guard let path = getenv("JACKKIT_TRACE"), path.pointee != 0 else { return -1 }
        return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    }()

    /// Whether steps are written.
    public static var isOn: Bool { descriptor >= 0 }

    /// Writes one step as one line (one `write`, so lines of processes sharing the file do not mix).
    public static func note(_ step: @autoclosure () -> String) {
        guard descriptor >= 0 else { return }
        let microseconds = cjack_monotonic_nanoseconds() / 1000
        let line = "\(microseconds / 1000).\(String(microseconds % 1000 + 1000).dropFirst()) \(getpid())/\(pthread_self() % 100_000) "
            + "\(step())\n"
        _ = line.withCString { write(descriptor, $0, strlen($0)) }
    }
}
