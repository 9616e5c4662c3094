import Foundation
import JackKit

/// An audio-session error, as AVAudioSession throws them: an `NSError` in
/// `NSOSStatusErrorDomain` whose `code` is AVAudioSession's code (a
/// four-character code as an integer, '!cat' = 560161140, or -50 for
/// badParam) and whose `localizedDescription` is a message a person can act
/// on. So the seeds' `catch let error as NSError` matches it, reading
/// `error.code` and `error.localizedDescription`; a plain `catch` keeps it
/// typed (the session's methods are `throws(AudioSessionError)`), with the
/// code as `sessionCode` and the JACK failure underneath as `cause`.
public final class AudioSessionError: NSError, @unchecked Sendable { // every stored property is a `let`
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

    /// What kind of failure this is, typed (`code` is the same as NSError's integer).
    public let sessionCode: Code
    /// What went wrong and what to do about it (the `localizedDescription`).
    public let message: String
    /// The JACK failure underneath, when there is one, for callers that
    /// switch on it (`.serverNotRunning`, `.serverStopped`, ...).
    public let cause: JackError?

    /// An error with `code` and `message`, caused by `cause` if given.
    public init(_ code: Code, _ message: String, cause: JackError? = nil) {
        sessionCode = code
        self.message = message
        self.cause = cause
        super.init(domain: NSOSStatusErrorDomain, code: code.rawValue, userInfo: [NSLocalizedDescriptionKey: message])
    }

    /// Not decoded: the session's errors are not archived.
    public required init?(coder: NSCoder) { nil }

    public override var description: String { "\(message) ['\(sessionCode.fourCharacterCode)' \(sessionCode.rawValue)]" }

    public override var localizedDescription: String { message }

    /// Equal when the code, the message and the cause are.
    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? AudioSessionError else { return false }
        return sessionCode == other.sessionCode && message == other.message && cause == other.cause
    }

    public override var hash: Int {
        var hasher = Hasher()
        hasher.combine(sessionCode)
        hasher.combine(message)
        return hasher.finalize()
    }

    /// The error as an `NSError`, as AVAudioSession throws it: itself (kept
    /// for code written before it was one).
    public var nsError: NSError { self }
}
