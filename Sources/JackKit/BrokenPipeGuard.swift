import CJack

/// Runs a libjack call that sends a request to the server with SIGPIPE
/// blocked on this thread, and takes back a SIGPIPE it raised.
///
/// libjack writes its requests to the server's socket with plain `write()`:
/// when the server has just died and the client has not read its shutdown
/// notification yet, the kernel raises SIGPIPE on the calling thread, and the
/// default action of that signal ends the process (a recorder losing its take
/// to a server restart). Blocked, the write fails with EPIPE and the call
/// returns its error as usual. The process's own SIGPIPE handling is left alone.
package func withoutBrokenPipeSignal<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    var pipeOnly = sigset_t()
    sigemptyset(&pipeOnly)
    sigaddset(&pipeOnly, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
    defer {
        // Only when it was not blocked before: then a pending one is this call's.
        if sigismember(&previous, SIGPIPE) == 0 {
            var pending = sigset_t()
            sigpending(&pending)
            if sigismember(&pending, SIGPIPE) == 1 {
                var now = timespec()
                _ = sigtimedwait(&pipeOnly, nil, &now)
            }
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
    return try body()
}
