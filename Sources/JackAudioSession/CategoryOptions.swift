/// Optional behaviours of a category (AVAudioSession.CategoryOptions), with
/// AVAudioSession's raw values.
public struct CategoryOptions: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Mix with other active sessions instead of interrupting them.
    public static let mixWithOthers = CategoryOptions(rawValue: 0x1)
    /// Lower other sessions' volume while this one plays.
    public static let duckOthers = CategoryOptions(rawValue: 0x2)
    /// Let Bluetooth hands-free devices appear as inputs.
    public static let allowBluetooth = CategoryOptions(rawValue: 0x4)
    /// Route output to the built-in speaker when nothing else is chosen.
    public static let defaultToSpeaker = CategoryOptions(rawValue: 0x8)
    /// Interrupt other spoken-audio sessions, mix with the rest (includes mixWithOthers).
    public static let interruptSpokenAudioAndMixWithOthers = CategoryOptions(rawValue: 0x11)
    /// Let playAndRecord play to AirPlay devices (the guide: "by activating
    /// the AVAudioSessionCategoryOptionAllowAirPlay option, you can enable
    /// non-mirrored AirPlay output").
    public static let allowAirPlay = CategoryOptions(rawValue: 0x40)

    /// Each option with its AVAudioSession name in lower camel case.
    public static let named: [(name: String, option: CategoryOptions)] = [
        ("mixWithOthers", .mixWithOthers), ("duckOthers", .duckOthers), ("allowBluetooth", .allowBluetooth),
        ("defaultToSpeaker", .defaultToSpeaker),
        ("interruptSpokenAudioAndMixWithOthers", .interruptSpokenAudioAndMixWithOthers), ("allowAirPlay", .allowAirPlay),
    ]

    /// The names of the options set, as AVAudioSession spells them.
    public var names: [String] {
        var names: [String] = []
        var rest = self
        // The widest option first, so 0x11 reads as one name.
        for (name, option) in Self.named.reversed() where rest.isSuperset(of: option) {
            names.append(name)
            rest.subtract(option)
        }
        return names.reversed()
    }

    /// The option with this name, or nil.
    public init?(name: String) {
        guard let match = Self.named.first(where: { $0.name == name }) else { return nil }
        self = match.option
    }
}
