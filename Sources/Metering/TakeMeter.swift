import Synchronization

/// A meter beside a take (`jas record --http`): fed on the disk thread
/// through `Recorder.Configuration.onWritten` with what the take wrote
/// (gaps as silence), so it reads the levels and loudness of the file itself.
public final class TakeMeter: Sendable {
    private let box = Mutex<IntervalMeter?>(nil)

    /// A take meter with no meter yet.
    public init() {}

    /// Set once the take's channels and rate are known.
    public var meter: IntervalMeter? {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }

    /// What `onWritten` hears: interleaved frames, or nil for frames of silence.
    public func add(_ samples: UnsafeBufferPointer<Float>?, frames: Int) {
        guard let meter else { return }
        if let samples, let base = samples.baseAddress {
            meter.add(base, frames: frames)
        } else {
            meter.addSilence(frames: frames)
        }
    }
}
