import JackKit
import Synchronization

/// Records how long each process cycle took, nanoseconds, into a buffer
/// preallocated off the real-time thread; stops recording when full.
public final class CycleCostRecorder: @unchecked Sendable { // the real-time thread fills a slot before publishing the count (release); readers read below it
    let durations: UnsafeMutableBufferPointer<UInt64>
    let recorded = Atomic<Int>(0)

    /// A recorder with room for `capacity` cycles.
    public init(capacity: Int) {
        durations = .allocate(capacity: capacity)
        durations.initialize(repeating: 0)
    }

    deinit { durations.deallocate() }

    /// Called on the real-time thread: stores one duration if there is room.
    @inline(__always)
    func record(_ nanoseconds: UInt64) {
        let index = recorded.load(ordering: .relaxed)
        guard index < durations.count else { return }
        durations[index] = nanoseconds
        recorded.store(index + 1, ordering: .releasing)
    }

    func touch() { _ = recorded.load(ordering: .relaxed) }

    /// Cycles recorded so far.
    public var count: Int { recorded.load(ordering: .acquiring) }

    /// Whether the buffer is full.
    public var isFull: Bool { count >= durations.count }

    /// The recorded durations, nanoseconds (a copy, taken off the real-time thread).
    public var samples: [UInt64] { Array(durations.prefix(count)) }
}
