import Foundation

/// A program killed inside JACK's metadata store: gdb stops a `jack_lsp` of
/// a server inside libdb's `__env_ref_increment`, right after it took the
/// environment's mutex, and kills it there, which leaves that lock held by a
/// thread that no longer exists. Every time: stopping at libdb's first
/// mutex lock of any kind instead left the store unlocked in about one try
/// of four (another mutex, taken and given back before).
public enum StoreLockKill {
    /// The gdb command line, to run on this machine or inside a separate one.
    public static func command(server: String) -> [String] {
        ["gdb", "-batch", "-ex", "set breakpoint pending on", "-ex", "break __env_ref_increment", "-ex", "run",
         "-ex", "break __db_pthread_mutex_lock", "-ex", "continue", "-ex", "finish", "-ex", "kill",
         "--args", "jack_lsp", "-s", server]
    }

    /// Whether gdb stopped the program at the environment's lock (its second breakpoint was hit).
    public static func stoppedAtTheLock(_ gdbOutput: String) -> Bool { gdbOutput.contains("Breakpoint 2,") }

    /// The process gdb killed, as gdb reports it.
    public static func killedProcess(_ gdbOutput: String) -> Int32? {
        gdbOutput.firstMatch(of: /\[Inferior 1 \(process ([0-9]+)\) killed\]/).flatMap { Int32($0.1) }
    }
}
