/// What an analyzer measurement tells while it runs (`jas` says it on
/// stderr; with `--json`, interruptions as JSON lines).
public enum AnalyzerNotice: Sendable, Equatable {
    /// Run `run` of `of` starts: `seconds` of signal.
    case playing(run: Int, of: Int, seconds: Double)
    /// Another session (a call) took the audio: the measurement waits.
    case interrupted(by: String)
    /// The interruption ended and the session is active again: the spoilt run is played again.
    case resumed
}

/// An analyzer measurement, as `jas` sets it up: how it tells of spoilt runs and of its progress.
public protocol AnalyzerMeasurement {
    /// Called when a run was spoilt and is measured again, with what spoilt it.
    var onSpoiltRun: (@Sendable (String) -> Void)? { get set }
    /// Told when a run starts, and of interruptions and the measuring again after them.
    var onNotice: (@Sendable (AnalyzerNotice) -> Void)? { get set }
}
