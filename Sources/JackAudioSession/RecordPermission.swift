import Foundation

/// Whether the app may record (AVAudioSession.RecordPermission).
public enum RecordPermission: String, Sendable, Codable {
    /// Not yet asked, refused, or given.
    case undetermined, denied, granted
}

/// The record-permission decisions of this machine's user, one per
/// application name, kept in `$XDG_CONFIG_HOME/jackaudiosession/record-permission.json`
/// (default `~/.config`). A headless machine has no dialog: `jas permission`
/// manages the file, and an undetermined request on a terminal asks once.
public struct RecordPermissionStore: Sendable {
    /// The file holding the decisions.
    public let path: String

    /// The store at the XDG location, or at `path`.
    public init(path: String? = nil) {
        self.path = path ?? ConfigurationFile.path("record-permission.json")
    }

    /// The decision for `application`.
    public func permission(for application: String) -> RecordPermission {
        decisions()[application] ?? .undetermined
    }

    /// Records a decision (`undetermined` removes it). A damaged file is not
    /// written over: the error names it.
    public func set(_ permission: RecordPermission, for application: String) throws {
        var all = try ConfigurationFile.read([String: RecordPermission].self, from: path) ?? [:]
        all[application] = permission == .undetermined ? nil : permission
        try ConfigurationFile.write(all, to: path)
    }

    /// Every stored decision. A damaged file counts as no decisions (so no
    /// application may record); `damage` says why it could not be read.
    public func decisions() -> [String: RecordPermission] {
        (try? ConfigurationFile.read([String: RecordPermission].self, from: path)) ?? [:]
    }

    /// Why the file cannot be read (nil when it can, or does not exist).
    public var damage: String? { ConfigurationFile.damage(of: path, as: [String: RecordPermission].self) }
}

/// Asks a person whether `application` may record audio from the JACK
/// server `server`: true or false, or nil when nobody can be asked. Runs on a
/// thread of its own and may take as long as the person does.
public typealias RecordPermissionPrompt = @Sendable (_ application: String, _ server: String) -> Bool?

/// Where a session's record permission comes from.
public enum RecordConsent: Sendable {
    /// The stored decision for the application (silence unless granted), as on iOS.
    case stored(RecordPermissionStore)
    /// The caller already has the user's consent by other means (a command the
    /// user typed to record, a loopback check capturing its own test signal).
    case givenByCaller

    /// The decision for `application`: the stored one, or granted when the caller gave consent.
    func permission(for application: String) -> RecordPermission {
        switch self {
        case let .stored(store): store.permission(for: application)
        case .givenByCaller: .granted
        }
    }
}
