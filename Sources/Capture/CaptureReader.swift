import JackKit

/// The reading half of a `RealtimeCapture`, for the one thread that drains
/// its ring (a disk writer, a live meter): takes whole cycles off the ring,
/// header and frames, into a buffer sized once for the largest period.
public final class CaptureReader {
    public let capture: RealtimeCapture
    private var scratch: [Float]

    public init(_ capture: RealtimeCapture) {
        self.capture = capture
        scratch = [Float](repeating: 0, count: (JackPeriod.maximumFrames + CycleHeader.floatCount) * max(1, capture.channels))
    }

    /// Hands every whole cycle waiting in the ring to `handle`, in order: its
    /// header and its interleaved frames (valid only during the call).
    /// Returns how many cycles it handed over.
    @discardableResult
    public func drain(_ handle: (CycleHeader, UnsafeBufferPointer<Float>) -> Void) -> Int {
        let ring = capture.ring
        let channels = capture.channels
        var cycles = 0
        while ring.availableToRead >= CycleHeader.floatCount {
            scratch.withUnsafeMutableBufferPointer { buffer in
                let head = UnsafeMutableBufferPointer(rebasing: buffer[0..<CycleHeader.floatCount])
                _ = ring.read(into: head)
                let header = CycleHeader(UnsafeBufferPointer(head))
                let body = UnsafeMutableBufferPointer(rebasing: buffer[0..<(header.frames * channels)])
                _ = ring.read(into: body)
                handle(header, UnsafeBufferPointer(body))
            }
            cycles += 1
        }
        return cycles
    }
}
