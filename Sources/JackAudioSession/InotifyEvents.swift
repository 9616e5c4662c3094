import Foundation

/// The events in a buffer of inotify events, as `read` returned it: each
/// one's mask and file name (an event without a name, e.g. about the watched
/// folder itself, gives "").
enum InotifyEvents {
    static func parse(_ bytes: ArraySlice<UInt8>) -> [(mask: UInt32, name: String)] {
        var events: [(UInt32, String)] = []
        var offset = bytes.startIndex
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= bytes.endIndex {
            let mask = bytes[offset + 4..<offset + 8].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            let length = bytes[offset + 12..<offset + 16].withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
            let nameBytes = bytes[(offset + header)..<min(bytes.endIndex, offset + header + length)]
            events.append((mask, String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)))
            offset += header + length
        }
        return events
    }
}
