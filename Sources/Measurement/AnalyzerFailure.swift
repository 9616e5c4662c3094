import Foundation
import JackAudioSession

/// Why an analyzer measurement (`SteppedSine`, `NoiseMeasurement`) gives no
/// figure: each case says what went wrong and what to do, and no number
/// comes with it.
public enum AnalyzerFailure: Error, Sendable, CustomStringConvertible {
    /// The session could not be set up or activated (a port missing, no server).
    case session(AudioSessionError)
    /// Every run had xruns in it, or the server ran no cycles.
    case spoilt(attempts: Int, reason: String)
    /// An input showed no tone: nothing feeds it, or the path is broken.
    case noSignal(inputPort: String, outputPort: String, levelDBFS: Double)
    /// A setting out of range.
    case invalidSetting(String)

    public var description: String {
        switch self {
        case let .session(error):
            return error.message
        case let .spoilt(attempts, reason):
            return "every run was spoilt (\(attempts) tried; the last: \(reason)): no figure is given; "
                + "measure again on a quieter machine, or at a longer period"
        case let .noSignal(input, output, level):
            let shown = level.isFinite ? String(format: "%.1f dBFS", level) : "digital silence"
            return "no tone came back on '\(input)' from '\(output)' (\(shown) at the tone's frequency): nothing feeds "
                + "that input, or the path between them is broken; connect '\(output)' to what feeds '\(input)'"
        case let .invalidSetting(reason):
            return reason
        }
    }
}
