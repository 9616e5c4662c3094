import Foundation
import XCTest

/// The analyzer's outside reference: a script of `scripts/` run with
/// python3 (scipy and numpy, which `make deps` installs), its standard output.
public func scipyReference(_ script: String, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> Data {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/\(script)").path
    let python = Process()
    python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    python.arguments = ["python3", path] + arguments
    let output = Pipe()
    python.standardOutput = output
    try python.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    python.waitUntilExit()
    XCTAssertEqual(python.terminationStatus, 0, "scipy's reference \(script) did not run (make deps installs scipy)",
                   file: file, line: line)
    return data
}

/// What a reference script prints as one JSON object of numbers, by key.
public func scipyFigures(_ script: String, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Double] {
    let data = try scipyReference(script, arguments, file: file, line: line)
    return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Double], file: file, line: line)
}
