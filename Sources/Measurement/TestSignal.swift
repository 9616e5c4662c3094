/// A seeded pseudo-random test signal that is a pure function of channel and
/// JACK frame time, so any captured sample can be checked against what was
/// sent without storing the sent signal.
///
/// Values are 24-bit integers scaled into [-0.5, 0.5): exact in 32-bit float,
/// so a bit-identical path returns exactly them.
public struct TestSignal: Sendable, Equatable {
    /// The seed; different seeds give unrelated signals.
    public let seed: UInt64

    /// A signal with this seed.
    public init(seed: UInt64) { self.seed = seed }

    /// The sample sent on `channel` at JACK frame time `frame`.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public func sample(channel: Int, frame: UInt32) -> Float {
        var mixed = seed &+ ((UInt64(truncatingIfNeeded: channel) << 32) | UInt64(frame)) &* 0x9E37_79B9_7F4A_7C15
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        let value = Int32(truncatingIfNeeded: mixed >> 40) - (1 << 23)
        return Float(value) / Float(1 << 24)
    }
}
