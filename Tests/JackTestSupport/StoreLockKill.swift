import Foundation

/// A program killed inside JACK's metadata store: gdb stops a `jack_lsp` of
/// a server right after libdb took its first lock of the store (the
/// environment's mutex, in `__env_ref_increment`, most times) and kills it
/// there, which leaves that lock held by a thread that no longer exists.
/// Which mutex libdb takes first is libdb's affair: in about one try of four
/// the kill leaves the store unlocked, and a test then has nothing to check.
public enum StoreLockKill {
    /// The gdb command line, to run on this machine or inside a separate one.
    public static func command(server: String) -> [String] {
        ["gdb", "-batch", "-ex", "set breakpoint pending on", "-ex", "break __db_pthread_mutex_lock", "-ex", "run",
         "-ex", "finish", "-ex", "kill", "--args", "jack_lsp", "-s", server]
    }

    /// Whether gdb stopped the program at the lock (its breakpoint was hit).
    public static func stoppedAtTheLock(_ gdbOutput: String) -> Bool { gdbOutput.contains("Breakpoint 1") }

    /// The process gdb killed, as gdb reports it.
    public static func killedProcess(_ gdbOutput: String) -> Int32? {
        gdbOutput.firstMatch(of: /\[Inferior 1 \(process ([0-9]+)\) killed\]/).flatMap { Int32($0.1) }
    }
}
