import Foundation
import XCTest

/// A small deterministic generator (SplitMix64), so made-up noise is the same every run.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64

    public init(state: UInt64) {
        self.state = state
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

extension XCTestCase {
    /// A generator for a randomized test: seeded from `JAS_TEST_SEED` when
    /// it is set (to run a failure again), else from a new seed each run.
    /// When the test fails, the seed is printed with how to run it again.
    public func seededGenerator() -> SeededGenerator {
        let given = ProcessInfo.processInfo.environment["JAS_TEST_SEED"].flatMap { UInt64($0) }
        let seed = given ?? UInt64.random(in: 0...UInt64.max)
        addTeardownBlock { [weak self] in
            guard let run = self?.testRun, run.totalFailureCount > 0 else { return }
            print("\(self?.name ?? "the test") was randomized with seed \(seed): run it again with JAS_TEST_SEED=\(seed)")
        }
        return SeededGenerator(state: seed)
    }
}
