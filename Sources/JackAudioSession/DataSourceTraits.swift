import Foundation
import JackKit

/// A value AVAudioSession names by a string constant (its Objective-C
/// `NSString` types): written as a literal, printed as its raw value.
public protocol NamedByString: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible where RawValue == String {
    init(rawValue: String)
}

extension NamedByString {
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public var description: String { rawValue }
}

/// Which way a data source (a microphone of a device) faces
/// (AVAudioSession.Orientation, the same raw values).
public struct DataSourceOrientation: NamedByString {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Pointing up.
    public static let top: Self = "Top"
    /// Pointing down.
    public static let bottom: Self = "Bottom"
    /// Pointing to the front.
    public static let front: Self = "Front"
    /// Pointing to the back.
    public static let back: Self = "Back"
    /// Pointing left.
    public static let left: Self = "Left"
    /// Pointing right.
    public static let right: Self = "Right"
}

/// Where on its device a data source sits (AVAudioSession.Location).
public struct DataSourceLocation: NamedByString {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// On the upper part of the device.
    public static let upper: Self = "Upper"
    /// On the lower part of the device.
    public static let lower: Self = "Lower"
}

/// How a microphone's sensitivity depends on direction (AVAudioSession.PolarPattern).
public struct PolarPattern: NamedByString {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Equally sensitive in every direction.
    public static let omnidirectional: Self = "Omnidirectional"
    /// Most sensitive to the front, least to the back.
    public static let cardioid: Self = "Cardioid"
    /// Like cardioid, less directional.
    public static let subcardioid: Self = "Subcardioid"
    /// Two channels, left and right.
    public static let stereo: Self = "Stereo"
}

/// What a device says about one of its banks (a data source) in JACK
/// metadata on the bank's capture ports, read from its first port. JACK
/// itself knows none of it: a device's bridge (the client that owns its
/// ports) sets what it knows, and absent keys leave the values nil, as the
/// seeds' properties are for a data source without them. The one key a
/// session writes is the preferred polar pattern; the device answers by
/// setting the selected one, when it can switch.
public struct DataSourceTraits: Sendable, Equatable, Codable {
    /// Where on the device the data source is (nil: not said).
    public var location: DataSourceLocation?
    /// Which way it points (nil: not said).
    public var orientation: DataSourceOrientation?
    /// The patterns the microphone can switch between; nil when it cannot.
    public var supportedPolarPatterns: [PolarPattern]?
    /// The pattern the microphone uses now (nil: not said).
    public var selectedPolarPattern: PolarPattern?
    /// The pattern a session asked for (nil: none asked).
    public var preferredPolarPattern: PolarPattern?

    /// The JACK metadata key of the location.
    public static let locationKey = "urn:jackaudiosession:data-source:location"
    /// The JACK metadata key of the orientation.
    public static let orientationKey = "urn:jackaudiosession:data-source:orientation"
    /// Patterns separated by commas ("Cardioid,Omnidirectional").
    public static let supportedPolarPatternsKey = "urn:jackaudiosession:data-source:supported-polar-patterns"
    /// Written by the device: the pattern it uses now.
    public static let selectedPolarPatternKey = "urn:jackaudiosession:data-source:selected-polar-pattern"
    /// Written by sessions (`setPreferredPolarPattern`), read by the device.
    public static let preferredPolarPatternKey = "urn:jackaudiosession:data-source:preferred-polar-pattern"
    /// Every key above: a change of one may change a route's data sources.
    public static let keys: Set<String> = [locationKey, orientationKey, supportedPolarPatternsKey,
                                           selectedPolarPatternKey, preferredPolarPatternKey]

    /// Traits as given; nil for what is not said.
    public init(location: DataSourceLocation? = nil, orientation: DataSourceOrientation? = nil,
                supportedPolarPatterns: [PolarPattern]? = nil, selectedPolarPattern: PolarPattern? = nil,
                preferredPolarPattern: PolarPattern? = nil) {
        self.location = location
        self.orientation = orientation
        self.supportedPolarPatterns = supportedPolarPatterns
        self.selectedPolarPattern = selectedPolarPattern
        self.preferredPolarPattern = preferredPolarPattern
    }

    /// The traits set on the port `subject` (read from a `Client`: non-real-time).
    public init(readFrom server: some PortDirectory, on subject: UInt64) {
        func value(_ key: String) -> String? {
            server.property(key, on: subject)?.trimmingCharacters(in: .whitespaces).nonEmpty
        }
        location = value(Self.locationKey).map(DataSourceLocation.init(rawValue:))
        orientation = value(Self.orientationKey).map(DataSourceOrientation.init(rawValue:))
        supportedPolarPatterns = value(Self.supportedPolarPatternsKey).map {
            $0.split(separator: ",").compactMap { $0.trimmingCharacters(in: .whitespaces).nonEmpty }
                .map(PolarPattern.init(rawValue:))
        }
        selectedPolarPattern = value(Self.selectedPolarPatternKey).map(PolarPattern.init(rawValue:))
        preferredPolarPattern = value(Self.preferredPolarPatternKey).map(PolarPattern.init(rawValue:))
    }

    /// Sets what the traits hold on the port `subject` (a device's bridge
    /// does this for its banks); nil values are left unset.
    public func write(to client: Client, on subject: UInt64) throws(JackError) {
        let values: [(String, String?)] = [
            (Self.locationKey, location?.rawValue), (Self.orientationKey, orientation?.rawValue),
            (Self.supportedPolarPatternsKey, supportedPolarPatterns?.map(\.rawValue).joined(separator: ",")),
            (Self.selectedPolarPatternKey, selectedPolarPattern?.rawValue),
            (Self.preferredPolarPatternKey, preferredPolarPattern?.rawValue),
        ]
        for case let (key, value?) in values { try client.setProperty(key, value: value, on: subject) }
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
