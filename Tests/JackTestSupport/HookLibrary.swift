import Foundation

/// A test hook written in C (a folder of Tests/ with one source file), built
/// as a shared library for LD_PRELOAD so that a real `jas` process runs with it:
/// * `CloseRaceHook/hook.c`: with `CLOSE_RACE_HOLD_MS` in the environment, the
///   first client arriving after the session started holds libjack's
///   notification thread that long;
/// * `StuckMetadataHook/stuck.c`: with `STUCK_METADATA` set, every metadata
///   read blocks for ever (a wedged metadata store);
/// * `DriftingClockHook/drift.c`: with `DRIFT_PPM` set, the process's
///   monotonic clocks run that many parts per million fast or slow (a jackd
///   whose sample clock drifts against the wall clock);
/// * `ClientSocketHook/hold.c`: with `HOLD_JACK_BIND_MS` and
///   `HOLD_JACK_BIND_NAME` set, binding that client's notification socket
///   takes that long (the moment another process can take its path);
/// * `SteppedWallClockHook/step.c`: with `WALL_CLOCK_STEP_FILE` naming a file
///   of seconds, the process's wall clock reads that much ahead or behind,
///   stepping when the test writes the file; its monotonic clocks run on.
public enum HookLibrary {
    case closeRace, stuckMetadata, driftingClock, clientSocket, steppedWallClock

    private var source: (folder: String, file: String) {
        switch self {
        case .closeRace: ("CloseRaceHook", "hook.c")
        case .stuckMetadata: ("StuckMetadataHook", "stuck.c")
        case .driftingClock: ("DriftingClockHook", "drift.c")
        case .clientSocket: ("ClientSocketHook", "hold.c")
        case .steppedWallClock: ("SteppedWallClockHook", "step.c")
        }
    }

    /// The library's path, compiled with cc once per test process (removed when it exits).
    public func path() throws -> String {
        let (folder, file) = source
        return try CSourceBuild.once(folder: folder, file: file, output: "\(folder)-\(getpid()).so") { source, output in
            ["-shared", "-fPIC", "-O1", "-I", source.deletingLastPathComponent().appendingPathComponent("include").path,
             "-o", output, source.path, "-ldl", "-lpthread"]
        }
    }
}
