import CJack

/// CLOCK_MONOTONIC, which captured cycles are stamped with; reading it is a
/// vDSO call, safe on the real-time thread.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary start (the boot, on Linux).
    public static var nanoseconds: UInt64 { UInt64(cjack_monotonic_nanoseconds()) }
}
