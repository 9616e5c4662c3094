import Foundation
import Synchronization

/// A C reference client run on a thread of the benchmark's own process:
/// `run` gets room for `cycles` callback durations and returns libjack's
/// status (0: success).
public final class InProcessReference: @unchecked Sendable {
    let durations: UnsafeMutableBufferPointer<UInt64>
    let done = Atomic<Bool>(false)

    public init(cycles: Int, run: @escaping @Sendable (UnsafeMutablePointer<UInt64>) -> Int32) {
        durations = .allocate(capacity: cycles)
        durations.initialize(repeating: 0)
        let thread = Thread { [self] in
            let status = run(durations.baseAddress!)
            if status != 0 { fatalError("in-process C reference failed (\(status))") }
            done.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// Waits until every cycle was timed and returns the durations, nanoseconds.
    public func finish() -> [UInt64] {
        while !done.load(ordering: .acquiring) { usleep(10_000) }
        defer { durations.deallocate() }
        return Array(durations)
    }
}
