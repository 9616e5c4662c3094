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

extension Percentiles {
    /// A Markdown table of a Swift callback's cost next to the C reference's, with their ratio.
    public static func comparisonTable(title: String, reference: (name: String, Percentiles),
                                       swift: (name: String, Percentiles), ratio: String = "ratio Swift/C") -> String {
        let c = reference.1, ours = swift.1
        return [
            "| \(title) | median (ns) | p99 (ns) |", "|---|---:|---:|",
            String(format: "| %@ | %.0f | %.0f |", reference.name, c.median, c.p99),
            String(format: "| %@ | %.0f | %.0f |", swift.name, ours.median, ours.p99),
            String(format: "| %@ | %.2f | %.2f |", ratio, ours.median / c.median, ours.p99 / c.p99),
        ].joined(separator: "\n")
    }
}
