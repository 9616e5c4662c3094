import CJack
import Foundation
import Synchronization

/// libjack's metadata calls: one at a time in the process (they share one
/// database handle and are not thread-safe: two sessions in one process, each
/// on its own queue, crashed inside jack_get_property), each within a bound.
///
/// jackd2 keeps metadata in a Berkeley DB every JACK process of the user opens
/// (`/dev/shm/jack_db-UID`); a process killed inside a call can leave one of
/// its locks held, and every later call of every process waits on it for
/// ever. A call that has not returned within `bound` seconds marks the store
/// as not answering: it is said once, on stderr, with what to do, and every
/// later metadata call of this process answers "nothing" at once. The stuck
/// call's thread stays where libjack left it. Never used on the real-time thread.
public enum MetadataCalls {
    public static let bound: Double = 2
    private static let queue = DispatchQueue(label: "jackkit.metadata")
    private static let stuck = Mutex<String?>(nil)

    /// Why metadata is not read any more in this process (nil while it answers).
    public static var notAnswering: String? { stuck.withLock { $0 } }

    /// Runs `body` on the metadata queue; nil when the store does not answer.
    static func run<T>(_ what: String, _ body: @escaping @Sendable () -> T?) -> T? {
        guard notAnswering == nil else { return nil }
        let outcome = CallOutcome<T>()
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        queue.async {
            // Not while a client opens or closes (see LibraryGlobals); the
            // bound below counts from when the call itself starts.
            let ran = LibraryGlobals.metadataCall(waitBound: ClientLifecycle.openBound + 5) { () -> T? in
                started.signal()
                return body()
            }
            if case let .some(value) = ran { outcome.value = value } else { started.signal() }
            finished.signal()
        }
        // An open or close that never ends is the lifecycle's to report.
        guard started.wait(timeout: .now() + ClientLifecycle.openBound + 10) == .success else { return nil }
        guard finished.wait(timeout: .now() + bound) == .success else {
            let store = "/dev/shm/jack_db-\(getuid())"
            let reason = "JACK's metadata store (\(store)) did not answer \(what) within \(Int(bound)) s"
            let first = stuck.withLock { current -> Bool in
                defer { current = current ?? reason }
                return current == nil
            }
            if first {
                let line = "jackkit: \(reason): a process killed inside a metadata call may hold its lock. Port groups, "
                    + "port types and pretty names are not read in this process from now on. To repair it: stop every "
                    + "JACK client and jackd, remove \(store), and start jackd again.\n"
                _ = try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
            }
            return nil
        }
        return outcome.value
    }

    private final class CallOutcome<T>: @unchecked Sendable { // written by the lane's closure before it signals, read by the caller only after
        var value: T?
    }
}

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
        let code = MetadataCalls.run("setting \(key)") { [self] in
            Result { () throws(JackError) in try request { jack_set_property($0, subject, key, value, type) } }
        } ?? .success(-1)
        if try code.get() != 0 { throw .propertyFailed(key: key, subject: String(subject), code: try code.get()) }
    }

    /// The value of a metadata property on `subject`, or nil when it has none.
    public func property(_ key: String, on subject: UInt64) -> String? {
        MetadataCalls.run("reading \(key)") {
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
        let code = MetadataCalls.run("removing \(key)") { [self] in
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
        let code = MetadataCalls.run("asking for the metadata object") { [self] in
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
        MetadataCalls.run("listing every property") { Self.allSubjects(withProperty: key) }
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
