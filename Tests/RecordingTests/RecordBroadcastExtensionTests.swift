import Foundation
import JackTestSupport
import XCTest

/// The `bext` chunk of every WAV and RF64 file `jas record` writes, read back
/// byte by byte (not through libsndfile, which wrote it): version 2, whose
/// five loudness fields (EBU Tech 3285) say "not calculated" (0x7FFF) until
/// the recorder measures them, never 0, which reads as a programme at 0.00
/// LUFS with a true peak of 0.00 dBTP.
final class RecordBroadcastExtensionTests: JackTestCase {
    struct LoudnessFields: Equatable {
        let version: UInt16
        let values: [Int16]
    }

    /// The version and the five loudness fields of the file's `bext` chunk.
    static func broadcastLoudness(of path: String) throws -> LoudnessFields {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: path))
        let bytes = [UInt8](data)
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            if id == "bext" {
                let body = offset + 8
                // Description 256, Originator 32, Reference 32, Date 10, Time 8, TimeReference 8: version at 346;
                // UMID 64 after it: the loudness fields at 412.
                let values = (0..<5).map { Int16(bitPattern: u16(body + 412 + 2 * $0)) }
                return LoudnessFields(version: u16(body + 346), values: values)
            }
            offset += 8 + size + (size & 1)
        }
        XCTFail("no bext chunk in \(path)")
        return LoudnessFields(version: 0, values: [])
    }

    func testEveryFileSaysItsLoudnessWasNotCalculated() throws {
        let server = try startServer(period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for format in ["wav", "rf64"] {
            let result = try run([jas, "record", "--server", server.name, "--ports", "loopback:capture_*",
                                  "--output", "\(folder)/take-\(format).\(format)", "--format", format,
                                  "--for", "2.5", "--rotate", "1s", "--rotate-from", "start", "--json"])
            XCTAssertEqual(result.status, 0, result.output)
            let files = try FileManager.default.contentsOfDirectory(atPath: folder)
                .filter { $0.hasPrefix("take-\(format)") && $0.hasSuffix(".\(format)") }
            XCTAssertEqual(files.count, 3, "\(files)")
            for file in files {
                let fields = try Self.broadcastLoudness(of: "\(folder)/\(file)")
                XCTAssertEqual(fields, LoudnessFields(version: 2, values: Array(repeating: 0x7FFF, count: 5)), file)
            }
        }
    }
}
