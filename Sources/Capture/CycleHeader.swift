/// What precedes each captured cycle's frames in a capture ring (a
/// `RealtimeCapture`'s, and the latency probe's): written on the real-time
/// thread (`write(frameTime:…:into:)`), read back by `init(_:)`, and parsed
/// nowhere else. Six floats, each holding 32 bits of an integer.
public struct CycleHeader: Equatable, Sendable {
    /// Floats of header before each cycle's frames.
    public static let floatCount = 6

    /// JACK frame time of the cycle's first frame.
    public var frameTime: UInt32
    /// Frames in the cycle.
    public var frames: Int
    /// CLOCK_MONOTONIC at the cycle, nanoseconds.
    public var nanoseconds: UInt64
    /// The server epoch the cycle was captured in.
    public var epoch: UInt32
    /// Frames dropped (ring full) before this cycle since capture began, modulo 2^32.
    public var droppedBefore: UInt32

    public init(frameTime: UInt32, frames: Int, nanoseconds: UInt64, epoch: UInt32, droppedBefore: UInt32 = 0) {
        self.frameTime = frameTime
        self.frames = frames
        self.nanoseconds = nanoseconds
        self.epoch = epoch
        self.droppedBefore = droppedBefore
    }

    /// Reads a header from `floatCount` floats taken off the ring.
    public init(_ floats: UnsafeBufferPointer<Float>) {
        frameTime = floats[0].bitPattern
        frames = Int(floats[1].bitPattern)
        nanoseconds = UInt64(floats[2].bitPattern) << 32 | UInt64(floats[3].bitPattern)
        epoch = floats[4].bitPattern
        droppedBefore = floats[5].bitPattern
    }

    /// Writes a header into `floatCount` floats, on the real-time thread
    /// (the fields as `init(_:)` reads them back).
    @inlinable @_noAllocation @_noLocks
    public static func write(frameTime: UInt32, frames: Int, nanoseconds: UInt64, epoch: UInt32, droppedBefore: UInt32,
                      into floats: UnsafeMutableBufferPointer<Float>) {
        floats[0] = Float(bitPattern: frameTime)
        floats[1] = Float(bitPattern: UInt32(truncatingIfNeeded: frames))
        floats[2] = Float(bitPattern: UInt32(truncatingIfNeeded: nanoseconds >> 32))
        floats[3] = Float(bitPattern: UInt32(truncatingIfNeeded: nanoseconds))
        floats[4] = Float(bitPattern: epoch)
        floats[5] = Float(bitPattern: droppedBefore)
    }
}
