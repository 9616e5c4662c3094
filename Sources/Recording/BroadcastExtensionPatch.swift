import Foundation

/// Writes fields of the `bext` chunk of a closed WAV or RF64 file:
/// libsndfile takes the chunk only before the first frame, and a file's
/// loudness is known only once it is complete (as, sometimes, its first
/// frame's time: `FrameClock.isSettled`). The chunk's layout is EBU Tech
/// 3285's: OriginationDate (10 characters) at byte 320 of its data,
/// OriginationTime (8) at 330, TimeReference (two little-endian UInt32, low
/// first) at 338, the version at 346, the UMID at 348, and the five loudness
/// fields (little-endian Int16) at 412.
enum BroadcastExtensionPatch {
    static let originationOffset = 320
    static let loudnessOffset = 412

    /// The five loudness fields; false when the file has no version-2 `bext`.
    @discardableResult
    static func write(_ loudness: FileLoudness, toFileAt path: String) -> Bool {
        var bytes: [UInt8] = []
        for field in loudness.broadcastFields {
            let value = UInt16(bitPattern: field)
            bytes += [UInt8(value & 0xFF), UInt8(value >> 8)]
        }
        return write(bytes, at: loudnessOffset, toFileAt: path)
    }

    /// OriginationDate, OriginationTime and TimeReference; false when the file has no `bext`.
    @discardableResult
    static func writeOrigination(_ utc: Double, zone: RecordingTimeZone, timeReference: UInt64,
                                 toFileAt path: String) -> Bool {
        let date = Array(zone.format("%Y-%m-%d", at: utc).utf8.prefix(10))
        let time = Array(zone.format("%H:%M:%S", at: utc).utf8.prefix(8))
        let reference = (0..<8).map { UInt8(truncatingIfNeeded: timeReference >> (8 * $0)) }
        let bytes = date + [UInt8](repeating: 0, count: 10 - date.count) + time
            + [UInt8](repeating: 0, count: 8 - time.count) + reference
        return write(bytes, at: originationOffset, toFileAt: path)
    }

    private static func write(_ bytes: [UInt8], at fieldOffset: Int, toFileAt path: String) -> Bool {
        guard let handle = FileHandle(forUpdatingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let start = chunkData(named: "bext", in: handle, atLeast: fieldOffset + bytes.count) else { return false }
        do {
            try handle.seek(toOffset: start + UInt64(fieldOffset))
            try handle.write(contentsOf: Data(bytes))
            return true
        } catch {
            return false
        }
    }

    /// Where the data of the chunk `name` starts, walking the RIFF/RF64
    /// chunks before `data` (libsndfile writes `bext` before it).
    private static func chunkData(named name: String, in handle: FileHandle, atLeast size: Int) -> UInt64? {
        guard let header = try? handle.read(upToCount: 12), header.count == 12,
              ["RIFF", "RF64"].contains(String(decoding: header.prefix(4), as: UTF8.self)),
              String(decoding: header[8..<12], as: UTF8.self) == "WAVE" else { return nil }
        var offset: UInt64 = 12
        while let chunk = try? handle.read(upToCount: 8), chunk.count == 8 {
            let id = String(decoding: chunk.prefix(4), as: UTF8.self)
            let length = UInt64(chunk[4]) | UInt64(chunk[5]) << 8 | UInt64(chunk[6]) << 16 | UInt64(chunk[7]) << 24
            if id == name { return length >= UInt64(size) ? offset + 8 : nil }
            if id == "data" { return nil }
            offset += 8 + length + (length & 1)
            guard (try? handle.seek(toOffset: offset)) != nil else { return nil }
        }
        return nil
    }
}
