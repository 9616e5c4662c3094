import Foundation
import Synchronization

/// A `ProgrammeMeter` fed by one thread while others reset, pause or read
/// it, handing out a reading at every `interval` seconds of audio, on those
/// boundaries whatever the size of what it is fed. `LiveMeter` feeds one from
/// its capture ring; `jas record --http` one with what the take wrote.
public final class IntervalMeter: Sendable {
    /// The meter and where the feeding thread stands in the interval: one
    /// thread at a time (the feeder, or one that resets, pauses or reads).
    private struct Metered {
        let meter: ProgrammeMeter
        var sinceReading = 0
    }
    private let metered: Mutex<Metered>
    private let intervalFrames: Int
    /// Frames of silence to feed for a gap, a chunk at a time.
    private let silence: [Float]
    private static let silenceChunk = 1024
    private let onReading: @Sendable (MeterReading) -> Void
    public let configuration: ProgrammeMeter.Configuration

    /// A meter that hands a reading to `onReading` every `interval` seconds of audio.
    public init(configuration: ProgrammeMeter.Configuration, interval: Double,
                onReading: @escaping @Sendable (MeterReading) -> Void) throws(MeteringError) {
        metered = Mutex(Metered(meter: try ProgrammeMeter(configuration: configuration)))
        intervalFrames = max(1, Int(interval * Double(configuration.sampleRate)))
        silence = [Float](repeating: 0, count: Self.silenceChunk * configuration.channels)
        self.onReading = onReading
        self.configuration = configuration
    }

    /// Meters `frames` interleaved frames; calls `onReading` at each interval's end.
    public func add(_ samples: UnsafePointer<Float>, frames: Int) {
        let channels = configuration.channels
        var offset = 0
        while offset < frames {
            let reading = metered.withLock { metered -> MeterReading? in
                let take = min(frames - offset, intervalFrames - metered.sinceReading)
                metered.meter.add(samples + offset * channels, frames: take)
                offset += take
                metered.sinceReading += take
                guard metered.sinceReading == intervalFrames else { return nil }
                metered.sinceReading = 0
                return metered.meter.reading()
            }
            if let reading { onReading(reading) }
        }
    }

    /// Meters `frames` frames of silence (a gap written as silence).
    public func addSilence(frames: Int) {
        var left = frames
        while left > 0 {
            let take = min(left, Self.silenceChunk)
            silence.withUnsafeBufferPointer { add($0.baseAddress!, frames: take) }
            left -= take
        }
    }

    /// Seconds of audio metered.
    public var seconds: Double { metered.withLock { $0.meter.seconds } }

    /// Starts the programme's figures again (see `ProgrammeMeter.resetProgramme`).
    public func resetProgramme() { metered.withLock { $0.meter.resetProgramme() } }

    /// Pauses or resumes the programme's figures; readings go on.
    public func setProgrammePaused(_ paused: Bool) { metered.withLock { $0.meter.setProgrammePaused(paused) } }

    /// The programme's figures so far.
    public func summary() -> MeterSummary { metered.withLock { $0.meter.summary() } }
}
