import CJack
import Glibc
import Synchronization

/// libjack's process-wide state (`JackLibGlobals`, with the metadata store's
/// handle) is made by a process's first open and destroyed by its last
/// close, and its metadata calls are not safe against that: a
/// `jack_get_property` running while the last client closed found the
/// store's handle half torn down and called through a null pointer
/// (`DB->get` at offset 0x278; two rehearsals crashed so). So a metadata
/// call never runs while a client opens or closes, and an open or close
/// waits for the metadata calls under way, within `drainBound` and only
/// while the store answers: a call stuck in a store a killed program left
/// locked never returns, and waiting on it would hold up every later open.
enum LibraryGlobals {
    private struct State {
        var metadataCalls = 0
        var lifecycleBusy = false
    }

    private static let state = Mutex(State())
    /// How long an open or close waits for metadata calls under way, seconds.
    static let drainBound = 3.0

    /// Runs an open or close: no metadata call starts meanwhile.
    static func lifecycle<T>(_ body: () -> T) -> T {
        state.withLock { $0.lifecycleBusy = true }
        let deadline = cjack_monotonic_nanoseconds() + UInt64(drainBound * 1e9)
        // A call the store never answers is given up on (MetadataCalls says so after its bound).
        while state.withLock({ $0.metadataCalls }) > 0 && MetadataCalls.notAnswering == nil
                && cjack_monotonic_nanoseconds() < deadline {
            usleep(1000)
        }
        defer { state.withLock { $0.lifecycleBusy = false } }
        return body()
    }

    /// Runs a metadata call once no open or close is under way (waiting at
    /// most `waitBound` seconds; nil when one still is).
    static func metadataCall<T>(waitBound: Double, _ body: () -> T?) -> T?? {
        let deadline = cjack_monotonic_nanoseconds() + UInt64(waitBound * 1e9)
        while true {
            let entered = state.withLock { state -> Bool in
                guard !state.lifecycleBusy else { return false }
                state.metadataCalls += 1
                return true
            }
            if entered { break }
            if cjack_monotonic_nanoseconds() >= deadline { return .none }
            usleep(1000)
        }
        defer { state.withLock { $0.metadataCalls -= 1 } }
        return .some(body())
    }
}
