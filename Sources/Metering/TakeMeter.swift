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

    /// Starts metering a take of `channels` channels at `sampleRate` from
    /// `sources` (the standard layout for the count, 0 VU at -18 dBFS):
    /// `onReading` hears a reading every `interval` seconds of the take.
    /// False if no meter could be made for it.
    @discardableResult
    public func begin(channels: Int, sampleRate: Int, sources: [String], interval: Double = 0.1,
                      onReading: @escaping @Sendable (MeterReading) -> Void) -> Bool {
        var configuration = ProgrammeMeter.Configuration(
            channels: channels, sampleRate: sampleRate, layout: ChannelLayout.standard(forChannels: channels), sources: sources)
        configuration.vuReferenceDBFS = -18
        meter = try? IntervalMeter(configuration: configuration, interval: interval, onReading: onReading)
        return meter != nil
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
