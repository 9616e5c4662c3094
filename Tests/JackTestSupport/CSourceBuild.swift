import Foundation
import Synchronization

/// A C source of the tests (`Tests/FOLDER/FILE`), compiled with cc once per
/// test process into a temporary file, which is removed when the process
/// exits. `HookLibrary` builds shared libraries this way, `TestProgram`
/// programs.
enum CSourceBuild {
    private static let built = Mutex<[String: String]>([:])

    /// The built file for `folder/file`, named `output` in the temporary
    /// folder; `arguments(source, output)` are cc's.
    static func once(folder: String, file: String, output name: String,
                     arguments: (_ source: URL, _ output: String) -> [String]) throws -> String {
        try built.withLock { built in
            if let path = built["\(folder)/\(file)"] { return path }
            let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(folder)
            let output = NSTemporaryDirectory() + name
            let cc = Process()
            cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            cc.arguments = ["cc"] + arguments(directory.appendingPathComponent(file), output)
            try cc.run()
            cc.waitUntilExit()
            guard cc.terminationStatus == 0 else {
                throw NSError(domain: "CSourceBuild", code: Int(cc.terminationStatus),
                              userInfo: [NSLocalizedDescriptionKey: "cc could not build \(folder)/\(file)"])
            }
            if built.isEmpty { atexit { CSourceBuild.removeBuilt() } }
            built["\(folder)/\(file)"] = output
            return output
        }
    }

    private static func removeBuilt() {
        for path in built.withLock({ Array($0.values) }) { unlink(path) }
    }
}
