import Foundation
import Synchronization

/// A small C program of the tests (a JACK client in a process of its own:
/// a device under test, a probe), compiled with cc against libjack once per
/// test process, and started so that it says `ready` once active.
public enum TestProgram {
    case clickProbe, polynomial

    private var source: (folder: String, file: String) {
        switch self {
        case .clickProbe: ("ClickProbe", "clickprobe.c")
        case .polynomial: ("DeviceUnderTest", "polynomial.c")
        }
    }

    private static let built = Mutex<[String: String]>([:])

    /// The program's binary (removed when the test process exits).
    public func path() throws -> String {
        let (folder, file) = source
        return try Self.built.withLock { built in
            if let path = built[file] { return path }
            let sourcePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(folder).appendingPathComponent(file).path
            let output = NSTemporaryDirectory() + "\(file.replacingOccurrences(of: ".c", with: ""))-\(getpid())"
            let cc = Process()
            cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            cc.arguments = ["cc", "-O2", "-o", output, sourcePath, "-ljack"]
            try cc.run()
            cc.waitUntilExit()
            guard cc.terminationStatus == 0 else {
                throw NSError(domain: "TestProgram", code: Int(cc.terminationStatus),
                              userInfo: [NSLocalizedDescriptionKey: "cc could not build \(sourcePath)"])
            }
            if built.isEmpty { atexit { TestProgram.removeBuilt() } }
            built[file] = output
            return output
        }
    }

    private static func removeBuilt() {
        for path in built.withLock({ Array($0.values) }) { unlink(path) }
    }

    /// Starts the program with `arguments` and waits for its `ready` line.
    public func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try path())
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let ready = output.fileHandleForReading.readData(ofLength: 6)
        guard String(decoding: ready, as: UTF8.self) == "ready\n" else {
            process.terminate()
            throw NSError(domain: "TestProgram", code: 1,
                          userInfo: [NSLocalizedDescriptionKey: "\(source.file) did not start: \(arguments)"])
        }
        return process
    }
}
