import Capture
import Foundation
import Synchronization

/// A dead-air alarm on a meter's readings (`jas meter`): their sample peaks
/// through Capture's `SilenceAlarm`, on a timeline of milliseconds of
/// audio metered.
public final class DeadAirWatch: Sendable {
    /// Seconds per step of the alarm's timeline.
    public static let tick = 0.001
    private let thresholdDBFS: Double
    private let holdSteps: Int64
    private let stepsPerReading: Int
    /// Made at the first reading, which says how many channels there are.
    private let alarm = Mutex<SilenceAlarm?>(nil)

    /// `interval`: seconds of audio per reading.
    public init(thresholdDBFS: Double, holdSeconds: Double, interval: Double) {
        self.thresholdDBFS = thresholdDBFS
        holdSteps = Int64((holdSeconds / Self.tick).rounded())
        stepsPerReading = max(1, Int((interval / Self.tick).rounded()))
    }

    /// Takes the next reading; reports each change (times in `tick`s).
    public func observe(_ reading: MeterReading, report: (SilenceAlarm.Change) -> Void) {
        let peaks = reading.channels.map { Float($0.samplePeakDBFS.isFinite ? pow(10, $0.samplePeakDBFS / 20) : 0) }
        let end = Int64((reading.seconds / Self.tick).rounded())
        let changes = alarm.withLock { alarm -> [SilenceAlarm.Change] in
            var current = alarm ?? SilenceAlarm(channels: peaks.count, thresholdDBFS: thresholdDBFS, holdFrames: holdSteps)
            defer { alarm = current }
            return current.observe(peaks: peaks, frames: stepsPerReading, at: end - Int64(stepsPerReading))
        }
        changes.forEach(report)
    }
}
