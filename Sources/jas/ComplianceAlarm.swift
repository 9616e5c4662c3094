import Metering
import Recording

/// The loudness alarm `jas record` and `jas meter` keep when a target is
/// given (`--loudness`, `--target`…): the watch over the readings and the
/// `--on-loudness-alarm` command run at each start or end of an alarm.
final class ComplianceAlarm: Sendable {
    private let watch: LoudnessAlarmWatch
    private let hook: HookCommand?

    /// The target the readings are held to.
    var target: LoudnessTarget { watch.target }

    /// The alarm the options ask for (nil: no target); `onHookProblem` hears
    /// why a run of the command failed.
    init?(_ options: LoudnessOptions, onHookProblem: @escaping @Sendable (String) -> Void) throws {
        guard let target = try options.loudnessTarget() else { return nil }
        watch = LoudnessAlarmWatch(target: target, holdSeconds: try options.holdSeconds())
        hook = options.onLoudnessAlarm.map { HookCommand(command: $0) { onHookProblem("--on-loudness-alarm: \($0)") } }
    }

    /// Watches one reading: an alarm that starts or ends is told to `tell`,
    /// then to the command.
    func observe(_ reading: MeterReading, tell: (LoudnessAlarm.Change, LoudnessTarget) -> Void) {
        watch.observe(reading) { change in
            tell(change, target)
            hook?.run(environment: LoudnessOptions.hookEnvironment(change, target: target))
        }
    }

    /// At the end: waits for the command's runs a few seconds, then ends them;
    /// `report` hears a sentence for each it had to end.
    func finish(report: (String) -> Void) {
        for ended in hook?.finish(within: 5) ?? [] { report("--on-loudness-alarm: \(ended)") }
    }
}
