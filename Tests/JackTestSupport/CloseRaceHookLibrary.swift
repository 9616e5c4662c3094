import Foundation
import Synchronization

/// The close-race hook (Tests/CloseRaceHook/hook.c) built as a shared library
/// for LD_PRELOAD, so that a real `jas` process can have its notification
/// thread held inside libjack: with `CLOSE_RACE_HOLD_MS` in its environment,
/// the first client arriving after its session started holds the thread that long.
public enum CloseRaceHookLibrary {
    private static let built = Mutex<String?>(nil)

    /// The library's path, compiled with cc once per test process.
    public static func path() throws -> String {
        try built.withLock { path in
            if let path { return path }
            let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("CloseRaceHook")
            let library = NSTemporaryDirectory() + "close-race-hook-\(getpid()).so"
            let cc = Process()
            cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            cc.arguments = ["cc", "-shared", "-fPIC", "-O1", "-I", source.appendingPathComponent("include").path,
                            "-o", library, source.appendingPathComponent("hook.c").path, "-ldl"]
            try cc.run()
            cc.waitUntilExit()
            guard cc.terminationStatus == 0 else {
                throw NSError(domain: "CloseRaceHookLibrary", code: Int(cc.terminationStatus),
                              userInfo: [NSLocalizedDescriptionKey: "cc could not build the close-race hook"])
            }
            path = library
            return library
        }
    }
}
