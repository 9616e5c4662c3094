/// Median and 99th percentile of a benchmark's nanosecond durations.
public struct Percentiles {
    public let median: Double
    public let p99: Double

    public init(_ samples: [UInt64]) {
        let sorted = samples.sorted()
        median = Double(sorted[sorted.count / 2])
        p99 = Double(sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
    }
}
