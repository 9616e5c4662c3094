import Glibc
import Synchronization

/// Starting the program again in a new process, with the same arguments, for
/// what only a new process cures: a server registry replaced under libjack
/// (`RegistryAttachment`). The new process gets the reason in its
/// environment (`previousReason`), so it can say why it was started again.
public enum ProcessRestart {
    /// The environment variable that carries the reason to the new process.
    public static let reasonVariable = "JACKAUDIOSESSION_RESTART_REASON"

    /// Why this process is a restart of an earlier one (nil: it is not),
    /// read once and removed from the environment, so that the programs it
    /// starts (hooks) do not take themselves for restarts.
    public static let previousReason: String? = {
        guard let value = getenv(reasonVariable) else { return nil }
        let reason = String(cString: value)
        unsetenv(reasonVariable)
        return reason
    }()

    /// Notes the descriptors the process was given when it started (call
    /// it first thing in `main`, before anything opens one): a restart
    /// keeps them, as the new process must be given them too. A parent may
    /// watch one of them to learn that this process ended (Foundation's
    /// `Process` does: one it sees closed, it takes for an exit and waits
    /// for a process that goes on running, and so for every other child it
    /// started).
    public static func noteInheritedDescriptors() {
        _ = previousReason
        let given = ServerProcess.entries("/proc/self/fd").compactMap(Int32.init).filter { $0 > 2 }
        inherited.withLock { $0 = given }
    }

    private static let inherited = Mutex<[Int32]?>(nil)

    /// Replaces this process with a new run of the same executable and
    /// arguments (`/proc/self/exe`, `CommandLine.arguments`), with `reason`
    /// in its environment. Every descriptor the process opened itself (a
    /// take's files, its locks, the signal pipe) is closed on the way; those
    /// it was given at start (`noteInheritedDescriptors`) are passed on. The
    /// signal mask is emptied (the calling thread's mask would be the new
    /// process's). Returns only when the exec failed, with its `errno`'s text.
    public static func reexecute(arguments: [String] = CommandLine.arguments, reason: String) -> String {
        let given = Set(inherited.withLock { $0 } ?? [])
        for name in ServerProcess.entries("/proc/self/fd") {
            guard let descriptor = Int32(name), descriptor > 2, !given.contains(descriptor) else { continue }
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
        setenv(reasonVariable, reason, 1)
        var empty = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, nil)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        execv("/proc/self/exe", &argv)
        let failure = String(cString: strerror(errno))
        for argument in argv { free(argument) }
        unsetenv(reasonVariable)
        return failure
    }
}
