import Foundation
import JackKit

/// An audio-session error: AVAudioSession's code (a four-character code as an
/// integer, or -50 for badParam) and a message a person can act on.
public struct AudioSessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// AVAudioSession's error codes.
    public enum Code: Int, Sendable, CaseIterable {
        /// No error.
        case none = 0
        /// The media server (jackd) is unavailable: 'msrv'.
        case mediaServicesFailed = 0x6D73_7276
        /// Deactivating while audio objects still run: '!act'.
        case isBusy = 0x2161_6374
        /// The operation does not fit the category: '!cat'.
        case incompatibleCategory = 0x2163_6174
        /// A non-mixable session may not interrupt others now: '!int'.
        case cannotInterruptOthers = 0x2169_6E74
        /// A required entitlement is missing: 'ent?'.
        case missingEntitlement = 0x656E_743F
        /// Playback cannot start: '!pla'.
        case cannotStartPlaying = 0x2170_6C61
        /// Recording cannot start: '!rec'.
        case cannotStartRecording = 0x2172_6563
        /// A parameter is out of range: -50.
        case badParam = -50
        /// A higher-priority session holds the audio: '!pri'.
        case insufficientPriority = 0x2170_7269
        /// The resource is not available: '!res'.
        case resourceNotAvailable = 0x2172_6573
        /// Something else went wrong: 'what'.
        case unspecified = 0x7768_6174
        /// Siri is recording: 'siri'. Never thrown here (there is no Siri);
        /// kept so that code switching on AVAudioSession's codes compiles.
        case siriIsRecording = 0x7369_7269

        /// The code as AVAudioSession prints it: four characters, or the number.
        public var fourCharacterCode: String {
            guard rawValue > 0 else { return String(rawValue) }
            let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * $0)) }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong and what to do about it.
    public let message: String
    /// The JACK failure underneath, when there is one, for callers that
    /// switch on it (`.serverNotRunning`, `.serverStopped`, ...).
    public let cause: JackError?

    /// An error with `code` and `message`, caused by `cause` if given.
    public init(_ code: Code, _ message: String, cause: JackError? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { "\(message) ['\(code.fourCharacterCode)' \(code.rawValue)]" }
}

/// AVAudioSession's errors are `NSError`s in `NSOSStatusErrorDomain` whose
/// code is the four-character code's integer ('!cat' is 560161140, badParam
/// −50) and whose `localizedDescription` is the message. Swift on Linux does
/// not bridge errors to `NSError` (`catch let error as NSError` never matches
/// a Swift error there), so this error carries the same through
/// `CustomNSError` and `LocalizedError` (`error.localizedDescription` is the
/// message), and `nsError` makes the `NSError` the seeds' code reads.
extension AudioSessionError: CustomNSError, LocalizedError {
    public static var errorDomain: String { NSOSStatusErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    public var errorDescription: String? { message }

    /// The error as AVAudioSession would have thrown it.
    public var nsError: NSError { NSError(domain: Self.errorDomain, code: errorCode, userInfo: errorUserInfo) }
}
