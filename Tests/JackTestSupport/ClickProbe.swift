import Foundation

/// `Tests/ClickProbe/clickprobe.c`, a JACK client in its own process: a
/// one-sample click on `clickprobe:out` at every JACK frame that is a
/// multiple of `every`, whose amplitude names it, and a line for every cycle
/// with the server's own time of it. On a jackd whose clocks the drifting
/// shim scales from origins the test gave (`DriftingServerClock`), that
/// makes an independent reference for a logger's time: the true wall time of
/// any JACK frame, and of a file's first frame from the first click in it.
public final class ClickProbe: @unchecked Sendable { // the process is read only by the test's thread
    public let every: Int
    let process: Process
    let cyclesPath: String

    /// One cycle as the probe logged it.
    public struct Cycle {
        public var frames: UInt32
        public var nframes: Int
        /// The server's time of the cycle and of the next, microseconds on its (scaled) CLOCK_MONOTONIC_RAW.
        public var usecs: Double
        public var nextUsecs: Double
        /// The probe's own CLOCK_MONOTONIC and CLOCK_REALTIME when its callback ran, ns.
        public var monotonic: Int64
        public var realtime: Int64
    }

    /// Starts the probe on `server` and waits until it runs.
    public init(server: String, every: Int) throws {
        self.every = every
        cyclesPath = NSTemporaryDirectory() + "clickprobe-cycles-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt"
        process = try TestProgram.clickProbe.start([server, String(every), cyclesPath])
    }

    deinit {
        if process.isRunning { process.terminate() }
        unlink(cyclesPath)
    }

    /// Stops the probe and reads every cycle it logged.
    public func stop() -> [Cycle] {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = (try? String(contentsOfFile: cyclesPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 6, let frames = UInt32(fields[0]), let nframes = Int(fields[1]), let usecs = Double(fields[2]),
                  let next = Double(fields[3]), let monotonic = Int64(fields[4]), let realtime = Int64(fields[5]) else { return nil }
            return Cycle(frames: frames, nframes: nframes, usecs: usecs, nextUsecs: next, monotonic: monotonic, realtime: realtime)
        }
    }

    /// Which click an amplitude names (k mod 255 of the k-th click frame).
    public static func clickIndex(amplitude: Float) -> Int { Int((amplitude * 256).rounded()) - 1 }
}

/// The origins and the rate the drifting shim (`HookLibrary.driftingClock`)
/// scales a jackd's monotonic clocks by, read just before the jackd starts:
/// with them, the server's time of a cycle is turned into true wall time.
public struct DriftingServerClock: Sendable {
    public let ppm: Double
    public let monotonicOrigin: Int64
    public let rawOrigin: Int64

    public init(ppm: Double) {
        self.ppm = ppm
        var monotonic = timespec(), raw = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        clock_gettime(CLOCK_MONOTONIC_RAW, &raw)
        monotonicOrigin = Int64(monotonic.tv_sec) * 1_000_000_000 + Int64(monotonic.tv_nsec)
        rawOrigin = Int64(raw.tv_sec) * 1_000_000_000 + Int64(raw.tv_nsec)
    }

    /// The jackd's environment: the shim, the rate and both origins.
    public func environment(shim: String) -> [String: String] {
        ["LD_PRELOAD": shim, "DRIFT_PPM": String(ppm), "DRIFT_ORIGIN_NS": String(monotonicOrigin),
         "DRIFT_ORIGIN_RAW_NS": String(rawOrigin)]
    }

    /// The true wall time (UTC seconds) of JACK frame `frame`, from the
    /// probe's cycles: the server's time of the cycle that holds it (jackd2
    /// times its cycles on CLOCK_MONOTONIC_RAW, which the shim scales), its
    /// place in the cycle, the shim's scale taken off, and this machine's
    /// CLOCK_REALTIME − CLOCK_MONOTONIC (the median the probe saw). Nil
    /// when no logged cycle holds the frame.
    public func trueUTC(ofFrame frame: UInt32, cycles: [ClickProbe.Cycle]) -> Double? {
        guard let cycle = cycles.last(where: { $0.frames <= frame && frame &- $0.frames < UInt32($0.nframes) }) else { return nil }
        let scale = 1 + ppm / 1e6
        let serverNanoseconds = (cycle.usecs + Double(frame &- cycle.frames) * (cycle.nextUsecs - cycle.usecs) / Double(cycle.nframes)) * 1000
        let trueRaw = Double(rawOrigin) + (serverNanoseconds - Double(rawOrigin)) / scale
        let offsets = cycles.map { $0.realtime - $0.monotonic }.sorted()
        let wallMinusMonotonic = Double(offsets[offsets.count / 2])
        return (trueRaw + Double(monotonicOrigin - rawOrigin) + wallMinusMonotonic) / 1e9
    }
}
