import Foundation

/// The file names in a buffer of inotify events, as `read` returned it
/// (an event without a name, e.g. about the watched folder itself, gives "").
enum InotifyEvents {
    static func names(in bytes: ArraySlice<UInt8>) -> [String] {
        var names: [String] = []
        var offset = bytes.startIndex
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= bytes.endIndex {
            let length = bytes[offset + 12..<offset + 16].withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
            let nameBytes = bytes[(offset + header)..<min(bytes.endIndex, offset + header + length)]
            names.append(String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self))
            offset += header + length
        }
        return names
    }
}
