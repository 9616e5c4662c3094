// swift-tools-version:6.0
// How another Swift package depends on JackAudioSession (docs/LIBRARY.md shows
// this file; `make test` builds it). Elsewhere the dependency is
// `.package(url: "<this repository>", from: "0.13.0")`; here it is the
// checkout two folders up.
import PackageDescription

let package = Package(
    name: "LevelWatch",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "JackAudioSession", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "level-watch",
            dependencies: [
                .product(name: "JackAudioSession", package: "JackAudioSession"),
                .product(name: "Metering", package: "JackAudioSession"),
            ]
        ),
        // The seeds' `catch let error as NSError` from top-level code (`make example-check` runs it).
        .executableTarget(
            name: "catch-check",
            dependencies: [.product(name: "JackAudioSession", package: "JackAudioSession")]
        ),
        // The guide's listings written for this library, run by `make example-check` against a private jackd.
        .executableTarget(
            name: "seed-listings",
            dependencies: [
                .product(name: "JackAudioSession", package: "JackAudioSession"),
                .product(name: "LoopbackHarness", package: "JackAudioSession"),
            ]
        ),
    ]
)
