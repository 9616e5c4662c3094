import Foundation

/// A `ProgrammeMeter` fed by one thread while others reset, pause or read
/// it, handing out a reading at every `interval` seconds of audio, on those
/// boundaries whatever the size of what it is fed. `LiveMeter` feeds one from
/// its capture ring; `jas record --http` one with what the take wrote.
public final class IntervalMeter: @unchecked Sendable { // the meter and its counters are behind `lock`
    private let meter: ProgrammeMeter
    private let lock = NSLock()
    private let intervalFrames: Int
    /// Touched by the feeding thread only.
    private var sinceReading = 0
    private var silence: [Float] = []
    private let onReading: @Sendable (MeterReading) -> Void

    /// A meter that hands a reading to `onReading` every `interval` seconds of audio.
    public init(configuration: ProgrammeMeter.Configuration, interval: Double,
                onReading: @escaping @Sendable (MeterReading) -> Void) throws(MeteringError) {
        meter = try ProgrammeMeter(configuration: configuration)
        intervalFrames = max(1, Int(interval * Double(configuration.sampleRate)))
        self.onReading = onReading
    }

    public var configuration: ProgrammeMeter.Configuration { meter.configuration }

    /// Meters `frames` interleaved frames; calls `onReading` at each interval's end.
    public func add(_ samples: UnsafePointer<Float>, frames: Int) {
        let channels = meter.configuration.channels
        var offset = 0
        while offset < frames {
            let take = min(frames - offset, intervalFrames - sinceReading)
            lock.withLock { meter.add(samples + offset * channels, frames: take) }
            offset += take
            sinceReading += take
            if sinceReading == intervalFrames {
                sinceReading = 0
                onReading(lock.withLock { meter.reading() })
            }
        }
    }

    /// Meters `frames` frames of silence (a gap written as silence).
    public func addSilence(frames: Int) {
        let channels = meter.configuration.channels
        let chunk = 4096
        if silence.isEmpty { silence = [Float](repeating: 0, count: chunk * channels) }
        var left = frames
        while left > 0 {
            let take = min(left, chunk)
            silence.withUnsafeBufferPointer { add($0.baseAddress!, frames: take) }
            left -= take
        }
    }

    /// Seconds of audio metered.
    public var seconds: Double { lock.withLock { meter.seconds } }

    /// Starts the programme's figures again (see `ProgrammeMeter.resetProgramme`).
    public func resetProgramme() { lock.withLock { meter.resetProgramme() } }

    /// Pauses or resumes the programme's figures; readings go on.
    public func setProgrammePaused(_ paused: Bool) { lock.withLock { meter.setProgrammePaused(paused) } }

    /// The programme's figures so far.
    public func summary() -> MeterSummary { lock.withLock { meter.summary() } }
}
