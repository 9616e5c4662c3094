// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "JackAudioSession",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "JackKit", targets: ["JackKit"]),
        .library(name: "JackRuntime", targets: ["JackRuntime"]),
        .library(name: "JackAudioSession", targets: ["JackAudioSession"]),
        .library(name: "EventSchema", targets: ["EventSchema"]),
        .library(name: "Measurement", targets: ["Measurement"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "SoundFile", targets: ["SoundFile"]),
        .library(name: "Recording", targets: ["Recording"]),
        .library(name: "Metering", targets: ["Metering"]),
        .library(name: "LoopbackHarness", targets: ["LoopbackHarness"]),
        .library(name: "RemoteWatch", targets: ["RemoteWatch"]),
        .library(name: "ComplianceReport", targets: ["ComplianceReport"]),
        .executable(name: "jas", targets: ["jas"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // C shims only: jack_client_open is variadic; real-time markers.
        .target(
            name: "CJack",
            linkerSettings: [.linkedLibrary("jack")]
        ),
        // The JACK layer: a typed Swift wrapper of libjack, nothing more (see
        // Sources/JackKit/README.md).
        .target(
            name: "JackKit",
            dependencies: ["CJack"],
            exclude: ["README.md"]
        ),
        // The one JSON-lines schema's encoder: keys, numbers, null, the time stamp.
        .target(
            name: "EventSchema",
            exclude: ["README.md"]
        ),
        // Above libjack, what a process needs to use it safely: the lifecycle
        // lane every open and close goes through (time limits, wedge latch,
        // client name lock), the checks before an open, the real-time engine
        // (the process callback's cycle block, output stage, cost recorder) and
        // the lock-free sample ring (see Sources/JackRuntime/README.md).
        .target(
            name: "JackRuntime",
            dependencies: ["JackKit", "CJack", "CWakeup", .product(name: "SystemPackage", package: "swift-system")],
            exclude: ["README.md"]
        ),
        // The AVAudioSession-shaped controller.
        .target(
            name: "JackAudioSession",
            dependencies: ["JackKit", "JackRuntime", "EventSchema", "CWakeup", .product(name: "SystemPackage", package: "swift-system")],
            exclude: ["README.md"]
        ),
        // What measuring tools do with the audio: test signals, loopback checks.
        .target(
            name: "Measurement",
            dependencies: ["JackAudioSession", "Capture", "JackKit", "JackRuntime", "CKissFFT", "EventSchema",
                           .product(name: "Yams", package: "Yams")],
            exclude: ["README.md"]
        ),
        // KissFFT (Debian libkissfft-dev, BSD-3-Clause), header only: the analyzer's FFT.
        .systemLibrary(
            name: "CKissFFT",
            providers: [.apt(["libkissfft-dev"])]
        ),
        // libsndfile (Debian libsndfile1-dev), header only.
        .systemLibrary(
            name: "CSndFile",
            pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]
        ),
        // libcrypto (OpenSSL 3, Debian libssl-dev), header only: the manifest's SHA-256 and Ed25519. The system's, not
        // swift-crypto, whose BoringSSL and wrappers alone took 4.4 CPU minutes (2.6 on two cores) of a clean release build.
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Listening to ports without disturbing anyone (for Recording and
        // Metering): which ports, the tap session, the capture ring with its one
        // cycle header and the reader that drains it, the source and silence watches.
        .target(
            name: "Capture",
            dependencies: ["JackAudioSession", "JackKit", "JackRuntime", "CWakeup"],
            exclude: ["README.md"]
        ),
        // C shim only: a semaphore wait on the monotonic clock (sem_clockwait), for a ring's reader.
        .target(name: "CWakeup"),
        // C shim only: glibc's close-from spawn action, so a hook a take runs inherits none of its files.
        .target(name: "CSpawn"),
        // Reading sound files through libsndfile (the file meter, and checking takes).
        .target(
            name: "SoundFile",
            dependencies: ["CSndFile"],
            exclude: ["README.md"]
        ),
        // What recording tools do with the audio: a ring to a disk thread, files
        // that survive crashes and server restarts, pre-roll and trigger.
        .target(
            name: "Recording",
            dependencies: ["Capture", "JackAudioSession", "JackKit", "JackRuntime", "CSndFile", "SoundFile", "EventSchema", "Metering",
                           "CLibCrypto", "CSpawn", .product(name: "SystemPackage", package: "swift-system")],
            exclude: ["README.md"]
        ),
        // libebur128 (Debian libebur128-dev), header only.
        .systemLibrary(
            name: "CLoudness",
            pkgConfig: "libebur128",
            providers: [.apt(["libebur128-dev"])]
        ),
        // Broadcast meters: R128 loudness and true peak (libebur128), PPM, VU,
        // K-meters; live from JACK ports (through the Capture ring) or from files.
        .target(
            name: "Metering",
            dependencies: ["Capture", "SoundFile", "JackAudioSession", "JackKit", "JackRuntime", "CLoudness", "EventSchema",
                           .product(name: "SystemPackage", package: "swift-system")],
            exclude: ["README.md"]
        ),
        // Starts and stops private jackd servers with loopback ports.
        .target(
            name: "LoopbackHarness",
            dependencies: ["JackKit", "JackRuntime", "JackAudioSession"],
            exclude: ["README.md"]
        ),
        // Watching a headless box: a live page, a WebSocket stream, Prometheus
        // metrics and control routes over HTTP (hummingbird, swift-prometheus,
        // swift-service-lifecycle), fed by a tool off the real-time path.
        .target(
            name: "RemoteWatch",
            dependencies: [
                "Metering", "Recording", "JackAudioSession", "EventSchema",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            exclude: ["README.md"]
        ),
        // A compliance report to look at: the records of jas meter and jas record as one HTML page and a CSV.
        .target(
            name: "ComplianceReport",
            dependencies: ["Metering", "Measurement"],
            exclude: ["README.md"]
        ),
        // The command-line tool: parses, calls the library, prints.
        .executableTarget(
            name: "jas",
            dependencies: [
                "JackAudioSession", "Measurement", "Capture", "Recording", "Metering", "LoopbackHarness", "JackKit", "JackRuntime",
                "RemoteWatch", "EventSchema", "ComplianceReport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            exclude: ["README.md"]
        ),
        // The README's example, compiled so it cannot rot.
        .executableTarget(
            name: "measurement-example",
            dependencies: ["JackAudioSession", "LoopbackHarness"],
            path: "Examples/MeasurementLatency"
        ),
        // The C reference clients of the benchmarks: a passthrough and a capture client.
        .target(
            name: "CReference",
            path: "Benchmarks/CReference",
            exclude: ["main.c"],
            sources: ["passthrough.c", "capture.c", "multiroute.c"],
            linkerSettings: [.linkedLibrary("jack")]
        ),
        // What the benchmarks share: percentiles, a C reference on a thread.
        .target(
            name: "BenchmarkSupport",
            path: "Benchmarks/Support"
        ),
        // Times the measurement session's process callback (make bench).
        .executableTarget(
            name: "callback-bench",
            dependencies: ["JackAudioSession", "JackKit", "JackRuntime", "LoopbackHarness", "CReference", "BenchmarkSupport"],
            path: "Benchmarks/CallbackCost"
        ),
        // Recovery time after jackd restarts (make bench).
        .executableTarget(
            name: "recovery-bench",
            dependencies: ["JackAudioSession", "JackKit", "JackRuntime", "LoopbackHarness", "CJack"],
            path: "Benchmarks/RecoveryTime"
        ),
        // jas monitor, record and meter through a thousand jackd restarts (make soak).
        .executableTarget(
            name: "restart-soak",
            dependencies: ["JackKit", "JackRuntime", "LoopbackHarness", "CJack"],
            path: "Benchmarks/RestartSoak"
        ),
        // How fast sessions of different processes yield to each other, before and after the registry (make bench).
        .executableTarget(
            name: "arbitration-bench",
            dependencies: ["JackKit", "JackRuntime", "LoopbackHarness"],
            path: "Benchmarks/ArbitrationLatency"
        ),
        // jas record next to jack_capture and a C capture client (make bench).
        .executableTarget(
            name: "record-bench",
            dependencies: ["Capture", "Recording", "Metering", "SoundFile", "JackAudioSession", "JackKit", "JackRuntime", "LoopbackHarness", "CReference",
                           "BenchmarkSupport"],
            path: "Benchmarks/RecordingCost"
        ),
        // jas meter next to ffmpeg's ebur128 filter and a C capture client (make bench).
        .executableTarget(
            name: "meter-bench",
            dependencies: ["Capture", "Metering", "Recording", "SoundFile", "JackAudioSession", "JackKit", "JackRuntime", "LoopbackHarness", "CReference",
                           "BenchmarkSupport"],
            path: "Benchmarks/MeteringCost"
        ),
        .executableTarget(
            name: "analyzer-bench",
            dependencies: ["Measurement", "BenchmarkSupport"],
            path: "Benchmarks/AnalyzerCost"
        ),
        // What serving --http costs a live meter: the callback and CPU, watched and not (make bench).
        .executableTarget(
            name: "watch-bench",
            dependencies: ["RemoteWatch", "Metering", "JackAudioSession", "JackKit", "JackRuntime", "LoopbackHarness", "BenchmarkSupport"],
            path: "Benchmarks/WatchCost"
        ),
        // jas latency's readings next to jack_delay's (make bench).
        .executableTarget(
            name: "latency-bench",
            dependencies: ["JackAudioSession", "JackKit", "LoopbackHarness", "Measurement"],
            path: "Benchmarks/LatencyReadings"
        ),
        // Test support: counts heap allocations made on the real-time thread.
        .target(
            name: "AllocationCounter",
            dependencies: ["CJack"],
            path: "Tests/AllocationCounter"
        ),
        // Test support: jack2 #395 made deterministic (a shm_open that sleeps
        // inside libjack's notification handling), and the helper that closes
        // a client right then, as libjack's callers do or through JackKit.
        .target(
            name: "CloseRaceHook",
            path: "Tests/CloseRaceHook"
        ),
        .executableTarget(
            name: "close-race",
            dependencies: ["CloseRaceHook", "JackKit", "JackRuntime", "CJack"],
            path: "Tests/CloseRace"
        ),
        // Test support: private jackd servers per test, logs on failure.
        .target(
            name: "JackTestSupport",
            dependencies: ["LoopbackHarness", "JackKit", "JackRuntime", "JackAudioSession", "Measurement", "Recording"],
            path: "Tests/JackTestSupport"
        ),
        // Test targets are named by kind. *UnitTests: no server (pure state machines, analysis, files, processes
        // that never reach a jackd). *ServerTests: every test runs against real servers (private jackd, PipeWire or
        // netjack2 started by the test, or by the jas it runs). The tests run the jas built beside their bundle
        // (`swift build --build-tests` and `swift test` build every product). Only EventSchemaUnitTests imports it,
        // so only it depends on it: the others compile while jas and the web stack under it do.
        .testTarget(
            name: "LibraryUnitTests",
            dependencies: ["JackAudioSession", "Measurement", "Metering", "Recording", "RemoteWatch", "Capture", "SoundFile", "JackKit",
                           "JackRuntime", "LoopbackHarness", "JackTestSupport"]
        ),
        // The JSON lines of every tool against recorded ones.
        .testTarget(
            name: "EventSchemaUnitTests",
            dependencies: ["JackAudioSession", "Capture", "Metering", "Recording", "RemoteWatch", "EventSchema", "jas"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "JackKitServerTests",
            dependencies: ["JackKit", "JackRuntime", "LoopbackHarness", "JackTestSupport"]
        ),
        .testTarget(
            name: "JackRuntimeServerTests",
            dependencies: ["JackKit", "JackRuntime", "LoopbackHarness", "JackTestSupport"]
        ),
        .testTarget(
            name: "AudioSessionServerTests",
            dependencies: ["JackAudioSession", "Measurement", "JackKit", "JackRuntime", "LoopbackHarness", "JackTestSupport", "AllocationCounter"]
        ),
        .testTarget(
            name: "SessionControllerServerTests",
            dependencies: ["JackAudioSession", "JackKit", "JackRuntime", "CJack", "LoopbackHarness", "JackTestSupport", "Measurement"]
        ),
        .testTarget(
            name: "MeasurementServerTests",
            dependencies: ["Measurement", "JackAudioSession", "JackKit", "JackRuntime", "LoopbackHarness", "JackTestSupport"]
        ),
        .testTarget(
            name: "RecordingServerTests",
            dependencies: ["Capture", "Recording", "SoundFile", "Measurement", "JackAudioSession", "JackKit", "JackRuntime", "LoopbackHarness",
                           "JackTestSupport", "AllocationCounter"]
        ),
        .testTarget(
            name: "MeteringServerTests",
            dependencies: ["Metering", "Capture", "Recording", "SoundFile", "JackAudioSession", "JackKit", "JackRuntime", "LoopbackHarness",
                           "JackTestSupport"]
        ),
        .testTarget(
            name: "RemoteWatchServerTests",
            dependencies: ["RemoteWatch", "JackTestSupport", "LoopbackHarness"],
            exclude: ["Probes"]
        ),
        // netjack2: a master here, a slave on a SeparateMachine (a mount namespace).
        .testTarget(
            name: "NetJackServerTests",
            dependencies: ["JackAudioSession", "JackKit", "LoopbackHarness", "JackTestSupport", "Recording", "SoundFile"]
        ),
        // PipeWire's JACK: a private headless daemon, clients through pw-jack.
        .testTarget(
            name: "PipeWireServerTests",
            dependencies: ["LoopbackHarness", "JackTestSupport"]
        ),
    ]
)
