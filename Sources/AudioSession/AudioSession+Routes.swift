import JackKit

extension AudioSession {
    /// The devices the session's audio goes through now (empty when inactive).
    public var currentRoute: RouteDescription { board.read { $0.activation.plan.route } }

    /// The input devices on the server (empty under a category without input).
    public var availableInputs: [PortDescription] {
        guard let client = openClient else { return [] }
        return RoutePlanner.availableInputs(DeviceCatalog(client: client), category: category)
    }

    /// Whether the server has any input device.
    public var isInputAvailable: Bool {
        guard let client = openClient else { return false }
        return !DeviceCatalog(client: client).inputs.isEmpty
    }

    /// The input device the app prefers, if set.
    public var preferredInput: PortDescription? {
        let uid = board.read { $0.preferences.preferredInput }
        guard let uid, let client = openClient else { return nil }
        return DeviceCatalog(client: client).input(uid)
    }

    /// Prefers an input device; it must be one of `availableInputs` (`badParam`
    /// otherwise); nil clears the preference. While active the route follows at once.
    public func setPreferredInput(_ input: PortDescription?) throws(AudioSessionError) {
        try core.sync { core throws(AudioSessionError) in try core.setPreferredInput(input) }
    }

    /// Sends playAndRecord output to the built-in speaker (`.speaker`) or back
    /// to the route rules (`.none`); posts a route change with reason `override`.
    /// Under any other category it is `badParam`.
    public func overrideOutputAudioPort(_ override: PortOverride) throws(AudioSessionError) {
        try core.sync { core throws(AudioSessionError) in try core.overrideOutputAudioPort(override) }
    }
}
