/// The rules of the Class Reference for combining a category, a mode and
/// options, and the side effects modes have.
public enum CategoryRules {
    /// The categories each option may be used with.
    static func categories(allowing option: CategoryOptions) -> Set<Category> {
        switch option {
        // Implicit in ambient. multiRoute as the guide's "Fine-Tuning a Category"
        // allows (the Class Reference names only playback and playAndRecord): a
        // stimulus player on several devices must not interrupt the meter beside it.
        case .mixWithOthers: [.ambient, .playback, .playAndRecord, .multiRoute]
        case .duckOthers: [.playback, .playAndRecord]
        case .allowBluetooth: [.record, .playAndRecord]
        case .defaultToSpeaker: [.playAndRecord]
        case .interruptSpokenAudioAndMixWithOthers: [.playback, .playAndRecord]
        case .allowAirPlay: [.playAndRecord]
        default: []
        }
    }

    /// Checks the combination and returns the options in force, side effects
    /// included (voiceChat and videoChat add allowBluetooth, videoChat also
    /// defaultToSpeaker). A mode the category does not allow is
    /// `incompatibleCategory`; an option the category does not allow is `badParam`.
    public static func resolve(_ category: Category, mode: Mode, options: CategoryOptions) throws(AudioSessionError)
        -> CategoryOptions {
        guard mode.compatibleCategories.contains(category) else {
            throw AudioSessionError(.incompatibleCategory,
                                    "mode \(mode.rawValue) cannot be used with category \(category.rawValue); it allows "
                                        + mode.compatibleCategories.map(\.rawValue).sorted().joined(separator: ", "))
        }
        let unknown = options.subtracting(CategoryOptions.named.reduce([]) { $0.union($1.option) })
        guard unknown.isEmpty else {
            throw AudioSessionError(.badParam, "unknown category option bits 0x\(String(unknown.rawValue, radix: 16))")
        }
        var unchecked = options
        // Widest first: interruptSpokenAudioAndMixWithOthers contains mixWithOthers.
        for (name, option) in CategoryOptions.named.reversed() where unchecked.isSuperset(of: option) {
            unchecked.subtract(option)
            let allowed = categories(allowing: option)
            guard allowed.contains(category) else {
                throw AudioSessionError(.badParam, "option \(name) cannot be used with category \(category.rawValue); "
                                            + "it is valid with " + allowed.map(\.rawValue).sorted().joined(separator: ", "))
            }
        }
        var resolved = options
        if mode == .voiceChat || mode == .videoChat { resolved.insert(.allowBluetooth) }
        if mode == .videoChat { resolved.insert(.defaultToSpeaker) }
        return resolved
    }

    /// Whether a session with this category and options mixes with others:
    /// ambient always; playback and playAndRecord only with mixWithOthers (or
    /// duckOthers: a session that lowers the others plays along with them,
    /// it does not stop them); multiRoute with mixWithOthers; the rest never.
    public static func isMixable(_ category: Category, options: CategoryOptions) -> Bool {
        switch category {
        case .ambient: true
        case .playback, .playAndRecord: options.contains(.mixWithOthers) || options.contains(.duckOthers)
        case .multiRoute: options.contains(.mixWithOthers)
        case .soloAmbient, .record, .audioProcessing: false
        }
    }
}
