import Foundation
import Synchronization

/// Compliance alarms on a meter's readings (`jas meter --loudness`): each
/// reading's short-term loudness and highest true peak through
/// `LoudnessAlarm`, on the timeline of seconds of audio metered.
public final class LoudnessAlarmWatch: Sendable {
    /// The target the readings are judged against.
    public let target: LoudnessTarget
    private let alarm: Mutex<LoudnessAlarm>

    /// A watch judging against `target`, with alarms held `holdSeconds` of audio.
    public init(target: LoudnessTarget, holdSeconds: Double) {
        self.target = target
        alarm = Mutex(LoudnessAlarm(target: target, holdSeconds: holdSeconds))
    }

    /// Takes the next reading; reports each alarm that starts or ends.
    public func observe(_ reading: MeterReading, report: (LoudnessAlarm.Change) -> Void) {
        let truePeak = reading.channels.map(\.truePeakDBTP).max() ?? -.infinity
        let changes = alarm.withLock {
            $0.observe(seconds: reading.seconds, shortTermLUFS: reading.shortTermLUFS, truePeakDBTP: truePeak)
        }
        changes.forEach(report)
    }

    /// The alarms on now.
    public var active: [LoudnessAlarm.Kind] { alarm.withLock { $0.active } }
}
