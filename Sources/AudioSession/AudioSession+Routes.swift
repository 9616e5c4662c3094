import JackKit

extension AudioSession {
    /// The devices the session's audio goes through now (empty when inactive).
    public var currentRoute: RouteDescription { activation.withLock { $0.plan.route } }

    /// The input devices on the server (empty under a category without input).
    public var availableInputs: [PortDescription] {
        guard category.hasInput, let client = openClient else { return [] }
        return DeviceCatalog(client: client).inputs
    }

    /// Whether the server has any input device.
    public var isInputAvailable: Bool {
        guard let client = openClient else { return false }
        return !DeviceCatalog(client: client).inputs.isEmpty
    }

    /// The input device the app prefers, if set.
    public var preferredInput: PortDescription? {
        let uid = preferences.withLock { $0.preferredInput }
        guard let uid, let client = openClient else { return nil }
        return DeviceCatalog(client: client).input(uid)
    }

    /// Prefers an input device; it must be one of `availableInputs` (`badParam`
    /// otherwise); nil clears the preference. While active the route follows at once.
    public func setPreferredInput(_ input: PortDescription?) throws(AudioSessionError) {
        if let input {
            guard availableInputs.contains(where: { $0.uid == input.uid }) else {
                throw AudioSessionError(.badParam, "'\(input.uid)' is not one of the available inputs ("
                                            + availableInputs.map(\.uid).joined(separator: ", ") + ")")
            }
        }
        preferences.withLock { $0.preferredInput = input?.uid }
        refreshRoute()
    }

    /// Sends playAndRecord output to the built-in speaker (`.speaker`) or back
    /// to the route rules (`.none`); posts a route change with reason `override`.
    /// Under any other category it is `badParam`.
    public func overrideOutputAudioPort(_ override: PortOverride) throws(AudioSessionError) {
        let category = category
        guard category == .playAndRecord else {
            throw AudioSessionError(.badParam, "overriding the output port needs category playAndRecord, not \(category.rawValue)")
        }
        preferences.withLock { $0.outputOverride = override }
        refreshRoute(reason: .override)
    }
}
