import Foundation
import JackKit

/// What a session publishes about itself for the sessions of other processes,
/// as JSON in its file of the server's `SessionRegistry`: no daemon, nothing
/// left running, and the state goes when the session's process goes.
///
/// What others publish is untrusted input: `parse` accepts only a bounded,
/// well-formed value of the current version and refuses anything else.
public struct SessionState: Codable, Sendable, Equatable {
    /// Longer values are refused without being parsed.
    public static let maximumLength = 4096
    /// The version of the format this library writes and reads.
    public static let currentVersion = 1

    /// The format's version.
    public var version = SessionState.currentVersion
    /// The JACK server the session is on.
    public var server: String
    /// Its JACK client name.
    public var client: String
    /// The process that runs it.
    public var pid: Int32
    /// The session's category.
    public var category: Category
    /// The session's mode.
    public var mode: Mode
    /// Option names as AVAudioSession spells them.
    public var options: [String]
    /// Whether the session is active.
    public var active: Bool
    /// The session's priority class.
    public var priority: AudioSession.Priority
    /// When it last activated, JACK microseconds: the activation order every
    /// process sees alike (ties broken by client UUID).
    public var order: UInt64
    /// It was interrupted and waits for the interruption to end.
    public var interrupted: Bool
    /// The client name of the session that interrupted it.
    public var interruptedBy: String?
    /// Its output carried sound recently (within the last `Audibility.hold` seconds).
    public var producingSound: Bool
    /// It lowers the others now: active with duckOthers, and, when it has a
    /// duck-release hold, not silent for longer than that.
    public var ducking: Bool
    /// It is lowered by another session now.
    public var ducked: Bool
    /// How far it lowers the others while ducking, dB (negative).
    public var duckLevelDB: Double
    /// It deactivated with notifyOthersOnDeactivation: those it interrupted may resume.
    public var resumeOthers: Bool
    /// Its multiRoute output streams while active (absent otherwise).
    public var streams: [Stream]?
    /// Its JACK client's UUID on the server (a state without one is refused).
    public var clientUUID: UInt64?

    /// One multiRoute output stream as published.
    public struct Stream: Codable, Sendable, Equatable {
        /// The stream's name.
        public var name: String
        /// The uid of its destination device.
        public var destination: String
        /// The device channels it plays to, 1-based.
        public var channels: [Int]
        /// The session's own ports that carry it (full names).
        public var ports: [String]
        /// Whether the destination is on the server (false: the stream is silent until it returns).
        public var connected: Bool

        /// A stream as published.
        public init(name: String, destination: String, channels: [Int], ports: [String], connected: Bool) {
            self.name = name
            self.destination = destination
            self.channels = channels
            self.ports = ports
            self.connected = connected
        }
    }

    /// A state as published.
    public init(server: String, client: String, pid: Int32, category: Category, mode: Mode, options: [String],
                active: Bool, priority: AudioSession.Priority, order: UInt64, interrupted: Bool, interruptedBy: String?,
                producingSound: Bool, ducking: Bool, ducked: Bool, duckLevelDB: Double, resumeOthers: Bool,
                streams: [Stream]? = nil, clientUUID: UInt64? = nil) {
        self.server = server
        self.client = client
        self.pid = pid
        self.category = category
        self.mode = mode
        self.options = options
        self.active = active
        self.priority = priority
        self.order = order
        self.interrupted = interrupted
        self.interruptedBy = interruptedBy
        self.producingSound = producingSound
        self.ducking = ducking
        self.ducked = ducked
        self.duckLevelDB = duckLevelDB
        self.resumeOthers = resumeOthers
        self.streams = streams
        self.clientUUID = clientUUID
    }

    /// The options as a set (names that are not options are ignored).
    public var categoryOptions: CategoryOptions {
        options.reduce(into: CategoryOptions()) { set, name in
            if let option = CategoryOptions(name: name) { set.formUnion(option) }
        }
    }

    /// Whether it mixes with others (ambient, mixWithOthers, duckOthers).
    public var isMixable: Bool { CategoryRules.isMixable(category, options: categoryOptions) }

    /// The JSON published.
    public func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// Why a published value was refused.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        /// Longer than `SessionState.maximumLength`, bytes.
        case tooLong(Int)
        /// Not a well-formed state, and why.
        case malformed(String)
        /// A version this library does not read.
        case unsupportedVersion(Int)
        /// A field outside what it may hold, named.
        case outOfRange(String)

        public var description: String {
            switch self {
            case let .tooLong(length): "value of \(length) bytes (more than \(SessionState.maximumLength))"
            case let .malformed(detail): "not a session state: \(detail)"
            case let .unsupportedVersion(version): "version \(version) (this library reads \(SessionState.currentVersion))"
            case let .outOfRange(field): "\(field) out of range"
            }
        }
    }

    /// Reads a value another client published.
    public static func parse(_ text: String) -> Result<SessionState, Refusal> {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumLength else { return .failure(.tooLong(bytes.count)) }
        let state: SessionState
        do {
            state = try JSONDecoder().decode(SessionState.self, from: Data(bytes))
        } catch {
            return .failure(.malformed(String(describing: error).prefix(200).description))
        }
        guard state.version == currentVersion else { return .failure(.unsupportedVersion(state.version)) }
        guard state.duckLevelDB.isFinite, (-96...0).contains(state.duckLevelDB) else {
            return .failure(.outOfRange("duckLevelDB"))
        }
        guard !state.client.isEmpty, state.client.utf8.count <= 256, state.options.count <= 16 else {
            return .failure(.outOfRange("client or options"))
        }
        guard (state.streams?.count ?? 0) <= 64, state.streams?.allSatisfy({ $0.channels.count <= 64 }) ?? true else {
            return .failure(.outOfRange("streams"))
        }
        return .success(state)
    }
}

/// A session published on the server: its client's UUID and its state.
public struct PublishedSession: Sendable, Equatable {
    /// The session's JACK client UUID.
    public let uuid: UInt64
    /// What it published.
    public let state: SessionState

    /// A published session.
    public init(uuid: UInt64, state: SessionState) {
        self.uuid = uuid
        self.state = state
    }
}

/// Reads the sessions published on a server.
public enum SessionDirectory {
    /// Every live session in `registry` whose state is well-formed (nil when
    /// the registry could not be read); a refused file is reported to
    /// `refused`. With `client`, only sessions whose JACK client is on the
    /// server now: a session that is reconnecting after a server restart
    /// still holds its file, under its old client's UUID.
    public static func sessions(in registry: SessionRegistry, using client: Client?,
                                refused: (String, SessionState.Refusal) -> Void = { _, _ in }) -> [PublishedSession]? {
        sessions(in: registry, onServer: client.map { client in { client.clientName(ofUUID: $0) == $1 } },
                 refused: refused)
    }

    /// `sessions(in:using:refused:)` with the check that a UUID names a
    /// client on the server now (`isOnServer(uuid, name)`) left to the caller.
    static func sessions(in registry: SessionRegistry, onServer isOnServer: ((UInt64, String) -> Bool)?,
                         refused: (String, SessionState.Refusal) -> Void) -> [PublishedSession]? {
        registry.liveRecords()?.compactMap { record in
            switch SessionState.parse(record.text) {
            case let .failure(refusal):
                refused(record.file, refusal)
                return nil
            case let .success(state):
                guard let uuid = state.clientUUID else {
                    refused(record.file, .malformed("no clientUUID"))
                    return nil
                }
                guard state.server == registry.serverName else { return nil }
                if let isOnServer, !isOnServer(uuid, state.client) { return nil }
                return PublishedSession(uuid: uuid, state: state)
            }
        }
    }
}
