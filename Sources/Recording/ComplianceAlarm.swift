import Foundation
import Metering

/// The loudness alarm kept beside a take or a live meter when a target is
/// given: the watch over the readings, and a command run at each start or
/// end of an alarm (environment: `JAS_EVENT`, `JAS_ALARM`, `JAS_LEVEL`,
/// `JAS_THRESHOLD`, `JAS_TARGET`, `JAS_POSITION_SECONDS`, `JAS_TIME`).
public final class ComplianceAlarm: Sendable {
    private let watch: LoudnessAlarmWatch
    private let hook: HookCommand?

    /// The target the readings are held to.
    public var target: LoudnessTarget { watch.target }

    /// An alarm on `target`, starting or ending after `holdSeconds`;
    /// `command` (nil: none) is run through the shell at each, and
    /// `onHookProblem` hears why a run failed.
    public init(target: LoudnessTarget, holdSeconds: Double, command: String?,
                onHookProblem: @escaping @Sendable (String) -> Void) {
        watch = LoudnessAlarmWatch(target: target, holdSeconds: holdSeconds)
        hook = command.map { HookCommand(command: $0, onFailure: onHookProblem) }
    }

    /// Watches one reading: an alarm that starts or ends is told to `tell`,
    /// then to the command.
    public func observe(_ reading: MeterReading, tell: (LoudnessAlarm.Change, LoudnessTarget) -> Void) {
        watch.observe(reading) { change in
            tell(change, target)
            hook?.run(environment: Self.environment(change, target: target))
        }
    }

    /// At the end: waits for the command's runs a few seconds, then ends them;
    /// `report` hears a sentence for each it had to end.
    public func finish(report: (String) -> Void) {
        for ended in hook?.finish(within: 5) ?? [] { report(ended) }
    }

    /// What the command finds in its environment.
    static func environment(_ change: LoudnessAlarm.Change, target: LoudnessTarget) -> [String: String] {
        [
            "JAS_EVENT": change.on ? "loudness_alarm" : "loudness_alarm_end",
            "JAS_ALARM": change.kind.rawValue,
            "JAS_LEVEL": String(format: "%.2f", change.level),
            "JAS_THRESHOLD": String(format: "%.2f", change.threshold),
            "JAS_TARGET": target.description,
            "JAS_POSITION_SECONDS": String(format: "%.3f", change.seconds),
            "JAS_TIME": ISO8601DateFormatter().string(from: Date()),
        ]
    }
}
