import JackKit
import Synchronization

/// A single-producer, single-consumer ring of `Float` samples for handing
/// audio from JACK's real-time thread to a worker.
///
/// The producer (the process callback) writes with `write`, which never
/// allocates, locks or waits: when the ring has no room it writes nothing and
/// counts the refusal in `overflows`. The consumer reads with `read` from any
/// one other thread. Capacity is a power of two; indices grow without bound
/// (wrapping at `Int.max` is centuries away) and are masked on access. Writes
/// and reads copy in at most two contiguous segments.
public final class SampleRing: @unchecked Sendable { // one writer and one reader: each slot belongs to one side until an atomic index hands it over
    /// Samples the ring holds.
    public let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<Float>
    private let writeIndex = Atomic<Int>(0)
    private let readIndex = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)

    /// A ring of at least `minimumCapacity` samples (rounded up to a power of two).
    public init(minimumCapacity: Int) {
        var size = 1
        while size < max(2, minimumCapacity) { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = .allocate(capacity: size)
        storage.initialize(repeating: 0, count: size)
    }

    deinit { storage.deallocate() }

    /// Times the producer found no room and dropped what it had.
    public var overflows: Int { refused.load(ordering: .relaxed) }

    /// Samples waiting to be read (consumer side).
    public var availableToRead: Int {
        writeIndex.load(ordering: .acquiring) - readIndex.load(ordering: .relaxed)
    }

    /// Writes all of `first` then all of `second` (a header and its frames, say),
    /// or nothing when both do not fit. Producer side; real-time safe.
    @discardableResult
    @_noAllocation @_noLocks
    public func write(_ first: UnsafeBufferPointer<Float>, _ second: UnsafeBufferPointer<Float>) -> Bool {
        let head = writeIndex.load(ordering: .relaxed)
        let tail = readIndex.load(ordering: .acquiring)
        let total = first.count + second.count
        guard capacity - (head - tail) >= total else {
            refused.add(1, ordering: .relaxed)
            return false
        }
        copyIn(first, at: head)
        copyIn(second, at: head + first.count)
        writeIndex.store(head + total, ordering: .releasing)
        return true
    }

    @_noAllocation @_noLocks
    private func copyIn(_ source: UnsafeBufferPointer<Float>, at index: Int) {
        guard let base = source.baseAddress, source.count > 0 else { return }
        let start = index & mask
        let firstPart = min(source.count, capacity - start)
        // Raw byte copies: the typed `update(from:count:)` is not provably
        // free of releases, which `@_noAllocation` rejects.
        UnsafeMutableRawPointer(storage + start).copyMemory(from: base, byteCount: firstPart * 4)
        if firstPart < source.count {
            UnsafeMutableRawPointer(storage).copyMemory(from: base + firstPart,
                                                        byteCount: (source.count - firstPart) * 4)
        }
    }

    /// Copies up to `destination.count` waiting samples out and returns how
    /// many. Consumer side.
    public func read(into destination: UnsafeMutableBufferPointer<Float>) -> Int {
        let tail = readIndex.load(ordering: .relaxed)
        let head = writeIndex.load(ordering: .acquiring)
        let count = min(destination.count, head - tail)
        guard count > 0, let base = destination.baseAddress else { return 0 }
        let start = tail & mask
        let firstPart = min(count, capacity - start)
        UnsafeMutableRawPointer(base).copyMemory(from: storage + start, byteCount: firstPart * 4)
        if firstPart < count {
            UnsafeMutableRawPointer(base + firstPart).copyMemory(from: storage, byteCount: (count - firstPart) * 4)
        }
        readIndex.store(tail + count, ordering: .releasing)
        return count
    }
}
