import CJack
import Foundation
import Synchronization

/// Well-known JACK metadata keys.
public enum MetadataKey {
    /// A human-friendly name for a port or client.
    public static let prettyName = "http://jack-audio.org/metadata/pretty-name"
    /// The group a port belongs to (e.g. a device's stereo pair).
    public static let portGroup = "http://jackaudio.org/metadata/port-group"
    /// The order of a port within its group.
    public static let order = "http://jackaudio.org/metadata/order"
    /// The kind of signal a port carries.
    public static let signalType = "http://jackaudio.org/metadata/signal-type"
    /// The hardware a port stands for.
    public static let hardware = "http://jackaudio.org/metadata/hardware"
}

extension Client {
    /// Sets a metadata property on `subject` (a client or port UUID).
    public func setProperty(_ key: String, value: String, type: String? = nil, on subject: UInt64) throws(JackError) {
        let code = lane.metadataCall("setting \(key)") { [self] in
            Result { () throws(JackError) in try request { jack_set_property($0, subject, key, value, type) } }
        } ?? .success(-1)
        if try code.get() != 0 { throw .propertyFailed(key: key, subject: String(subject), code: try code.get()) }
    }

    /// The value of a metadata property on `subject`, or nil when it has none.
    public func property(_ key: String, on subject: UInt64) -> String? {
        lane.metadataCall("reading \(key)") {
            var value: UnsafeMutablePointer<CChar>?
            var type: UnsafeMutablePointer<CChar>?
            guard jack_get_property(subject, key, &value, &type) == 0, let value else { return nil }
            defer {
                jack_free(value)
                if let type { jack_free(type) }
            }
            return String(cString: value)
        }
    }

    /// Removes a metadata property from `subject`.
    public func removeProperty(_ key: String, on subject: UInt64) throws(JackError) {
        let code = lane.metadataCall("removing \(key)") { [self] in
            Result { () throws(JackError) in try request { jack_remove_property($0, subject, key) } }
        } ?? .success(-1)
        if try code.get() != 0 { throw .propertyFailed(key: key, subject: String(subject), code: try code.get()) }
    }
}

extension Client {
    /// On PipeWire's libjack, whether the daemon has no `default` metadata
    /// object (then every metadata call fails and nothing is ever read); nil
    /// on jackd2, which always has its store. Asked by removing a key nobody
    /// sets: PipeWire's `jack_remove_property` fails only without the object
    /// (and with it, removes nothing). Never used on the real-time thread.
    public var pipeWireLacksMetadata: Bool? {
        guard LibraryVersion.isPipeWire, !isClosed else { return nil }
        let subject = uuid
        let code = lane.metadataCall("asking for the metadata object") { [self] in
            (try? request { jack_remove_property($0, subject, "urn:jackaudiosession:metadata-probe") }) ?? -1
        }
        return code != 0
    }
}

extension Client {
    /// The UUID of the client named `clientName` (a metadata subject), or nil
    /// when no such client is on the server.
    public func uuid(ofClient clientName: String) -> UInt64? {
        let found = requestIfOpen { jack_get_uuid_for_client_name($0, clientName) }
        guard let text = found ?? nil else {
            return nil
        }
        defer { jack_free(text) }
        var uuid: jack_uuid_t = 0
        return jack_uuid_parse(text, &uuid) == 0 ? uuid : nil
    }
}

extension Client {
    /// Every subject that has a `key` property, with its value (one read of
    /// the metadata store for all of them); nil when the store could not be read.
    public func subjects(withProperty key: String) -> [(subject: UInt64, value: String)]? {
        lane.metadataCall("listing every property") { Self.allSubjects(withProperty: key) }
    }

    private static func allSubjects(withProperty key: String) -> [(subject: UInt64, value: String)]? {
        var descriptions: UnsafeMutablePointer<jack_description_t>?
        let count = jack_get_all_properties(&descriptions)
        guard count >= 0 else { return nil }
        guard count > 0, let descriptions else { return [] }
        defer {
            for index in 0..<Int(count) { jack_free_description(descriptions + index, 0) }
            jack_free(descriptions)
        }
        var found: [(UInt64, String)] = []
        for index in 0..<Int(count) {
            let description = descriptions[index]
            guard let properties = description.properties else { continue }
            for number in 0..<Int(description.property_cnt) {
                let property = properties[number]
                guard let propertyKey = property.key, String(cString: propertyKey) == key,
                      let data = property.data else { continue }
                found.append((description.subject, String(cString: data)))
            }
        }
        return found
    }

    /// The name of the client with this UUID on this client's server, or nil
    /// when there is none (it closed, or the UUID belongs to another server).
    public func clientName(ofUUID uuid: UInt64) -> String? {
        guard !isClosed else { return nil }
        var text = [CChar](repeating: 0, count: Int(JACK_UUID_STRING_SIZE))
        jack_uuid_unparse(uuid, &text)
        let found = requestIfOpen { jack_get_client_name_by_uuid($0, text) }
        guard let name = found ?? nil else { return nil }
        defer { jack_free(name) }
        return String(cString: name)
    }
}
