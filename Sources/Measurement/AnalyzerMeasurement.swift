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

/// An analyzer measurement: where it runs (a server, `--out`/`--in` port
/// pairs), how often a spoilt run is tried, and how it tells of spoilt runs
/// and of its progress.
public protocol AnalyzerMeasurement {
    /// The JACK server to measure on.
    var serverName: String { get }
    /// The ports the stimulus is played to, one per channel.
    var outputPorts: [String] { get }
    /// The ports the response is read from, paired with `outputPorts`.
    var inputPorts: [String] { get }
    /// How many runs may be tried before a spoilt measurement is given up on.
    var maximumAttempts: Int { get }
    /// The JACK client name of the measuring session.
    var clientName: String { get }
    /// Called when a run was spoilt and is measured again, with what spoilt it.
    var onSpoiltRun: (@Sendable (String) -> Void)? { get set }
    /// Told when a run starts, and of interruptions and the measuring again after them.
    var onNotice: (@Sendable (AnalyzerNotice) -> Void)? { get set }
}

extension AnalyzerMeasurement {
    /// The session, runs and retries every measurement shares, set up as this one is.
    var stimulusRun: StimulusRun {
        StimulusRun(serverName: serverName, clientName: clientName, outputPorts: outputPorts, inputPorts: inputPorts,
                    maximumAttempts: maximumAttempts, onSpoiltRun: onSpoiltRun, onNotice: onNotice)
    }
}

/// What every analyzer result says of the run that made it.
public protocol AnalyzerResult {
    /// The server measured on.
    var serverName: String { get }
    /// The server's sample rate, Hz, and period, frames.
    var sampleRate: Int { get }
    /// The server's period, frames.
    var periodFrames: Int { get }
    /// Runs made, the spoilt ones too.
    var attempts: Int { get }
}
