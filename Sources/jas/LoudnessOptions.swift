import ArgumentParser
import Foundation
import Metering
import Recording

/// The compliance target of `jas meter`: a standard's (`--loudness r128`,
/// `a85`) or figures of one's own, and how long a level must stay out
/// before it is an alarm; `--on-loudness-alarm` runs a command at each.
struct LoudnessOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Alarm when the programme leaves a standard's loudness: r128 (-23 LUFS ±1 LU, true peak ≤ -1 dBTP) or a85 (-24 LKFS ±2 dB, ≤ -2 dBTP).")
    var loudness: String?

    @Option(parsing: .unconditional, help: "The target loudness, e.g. -23 or -23LUFS (instead of, or changing, --loudness's; without --loudness, R128's figures stand for those not given).")
    var target: String?

    @Option(help: "How far the short-term loudness may stray from the target, e.g. 1 or 1LU (default: the standard's, else 1).")
    var tolerance: String?

    @Option(parsing: .unconditional, help: "The true-peak ceiling, e.g. -1 or -1dBTP (default: the standard's, else -1).")
    var maxTruePeak: String?

    @Option(parsing: .unconditional, help: "How long the short-term loudness must stay out (or back in, 0.5 LU inside) before an alarm starts (or ends), e.g. 10s; a true peak over starts its alarm at once and ends it after this long without one.")
    var loudnessHold: String = "10s"

    @Option(help: "A shell command to run when a loudness alarm starts or ends (environment: JAS_EVENT, JAS_ALARM, JAS_LEVEL, JAS_THRESHOLD, JAS_TARGET, JAS_POSITION_SECONDS, JAS_TIME).")
    var onLoudnessAlarm: String?

    /// The target asked for; nil when no loudness option was given.
    func loudnessTarget() throws -> LoudnessTarget? {
        guard loudness != nil || target != nil || tolerance != nil || maxTruePeak != nil else {
            if onLoudnessAlarm != nil { throw ValidationError("--on-loudness-alarm needs a target: --loudness r128, --loudness a85 or --target LUFS") }
            return nil
        }
        var chosen: LoudnessTarget
        if let loudness {
            guard let named = LoudnessTarget.named(loudness) else {
                throw ValidationError(LoudnessTarget.unknownStandard(loudness, option: "--loudness", targetOption: true))
            }
            chosen = named
        } else {
            // Figures of one's own: R128's for those not given.
            chosen = LoudnessTarget(targetLUFS: LoudnessTarget.r128.targetLUFS, toleranceLU: LoudnessTarget.r128.toleranceLU,
                                    maxTruePeakDBTP: LoudnessTarget.r128.maxTruePeakDBTP)
        }
        if let target {
            chosen.targetLUFS = try Self.figure(target, "--target", units: ["lufs", "lkfs"], in: -60 ... -5, example: "-23")
            if loudness != nil { chosen.name += " with target \(Self.spoken(chosen.targetLUFS))" }
        }
        if let tolerance { chosen.toleranceLU = try Self.figure(tolerance, "--tolerance", units: ["lu", "db"], in: 0.1...20, example: "1") }
        if let maxTruePeak {
            chosen.maxTruePeakDBTP = try Self.figure(maxTruePeak, "--max-true-peak", units: ["dbtp", "db"], in: -30...3, example: "-1")
        }
        return chosen
    }

    func holdSeconds() throws -> Double {
        try OptionCheck.duration(loudnessHold, "--loudness-hold", in: 0.1...3600, example: "10s or 1min")
    }

    /// The alarm these options ask for (nil: no target); `onHookProblem`
    /// hears why a run of `--on-loudness-alarm` failed.
    func alarm(onHookProblem: @escaping @Sendable (String) -> Void) throws -> ComplianceAlarm? {
        guard let target = try loudnessTarget() else { return nil }
        return ComplianceAlarm(target: target, holdSeconds: try holdSeconds(), command: onLoudnessAlarm) {
            onHookProblem("--on-loudness-alarm: \($0)")
        }
    }

    /// A number typed with or without its unit (`-23`, `-23LUFS`, `-23 LUFS`).
    static func figure(_ text: String, _ option: String, units: [String], in range: ClosedRange<Double>, example: String) throws -> Double {
        var number = text.lowercased().trimmingCharacters(in: .whitespaces)
        for unit in units where number.hasSuffix(unit) {
            number.removeLast(unit.count)
            break
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, range.contains(value) else {
            throw ValidationError("\(option) must be a number from \(spoken(range.lowerBound)) to \(spoken(range.upperBound))\(units.first.map { " " + $0.uppercased() } ?? ""), "
                                  + "e.g. \(example) or \(example)\(units.first?.uppercased() ?? ""), not '\(text)'")
        }
        return value
    }

    private static func spoken(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

extension LoudnessTarget {
    /// What `--loudness` says of a name it does not know. Where the command
    /// takes `--target`, a figure typed there (`--loudness -23`) is pointed to it.
    static func unknownStandard(_ value: String, option: String, targetOption: Bool) -> String {
        let standards = "\(option) must be r128 or a85"
        guard targetOption else { return "\(standards), not '\(value)'" }
        let number = value.lowercased().replacingOccurrences(of: "lufs", with: "").replacingOccurrences(of: "lkfs", with: "")
        guard let figure = Double(number.trimmingCharacters(in: .whitespaces)) else {
            return "\(standards), not '\(value)' (or give --target LUFS)"
        }
        return "\(standards); for a loudness of your own give --target \(value)"
            + (figure > 0 ? " (loudness targets are negative, e.g. --target -23)" : "")
    }
}
