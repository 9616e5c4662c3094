import CJack

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
        try ensureOpen()
        let code = jack_set_property(handle, subject, key, value, type)
        if code != 0 { throw .propertyFailed(key: key, subject: String(subject), code: code) }
    }

    /// The value of a metadata property on `subject`, or nil when it has none.
    public func property(_ key: String, on subject: UInt64) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        var type: UnsafeMutablePointer<CChar>?
        guard jack_get_property(subject, key, &value, &type) == 0, let value else { return nil }
        defer {
            jack_free(value)
            if let type { jack_free(type) }
        }
        return String(cString: value)
    }

    /// Removes a metadata property from `subject`.
    public func removeProperty(_ key: String, on subject: UInt64) throws(JackError) {
        try ensureOpen()
        let code = jack_remove_property(handle, subject, key)
        if code != 0 { throw .propertyFailed(key: key, subject: String(subject), code: code) }
    }
}

extension Client {
    /// The UUID of the client named `clientName` (a metadata subject), or nil
    /// when no such client is on the server.
    public func uuid(ofClient clientName: String) -> UInt64? {
        guard !isClosed, let text = jack_get_uuid_for_client_name(handle, clientName) else { return nil }
        defer { jack_free(text) }
        var uuid: jack_uuid_t = 0
        return jack_uuid_parse(text, &uuid) == 0 ? uuid : nil
    }
}
