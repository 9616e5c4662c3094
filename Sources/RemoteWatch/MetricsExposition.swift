/// The metrics as a scraper reads them. swift-prometheus writes the classic
/// text format (0.0.4) with Swift's spelling of special values (`nan`,
/// `-inf`); both formats want `NaN`, `+Inf` and `-Inf`, and OpenMetrics
/// also names a counter's family without its `_total` (the samples keep it)
/// and ends with `# EOF`. Loudness below the gate is NaN and a level in
/// digital silence −Inf, so every scrape has them.
enum MetricsExposition {
    enum Format {
        case text, openMetrics

        var contentType: String {
            switch self {
            case .text: "text/plain; version=0.0.4; charset=utf-8"
            case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
            }
        }
    }

    static func render(_ exposition: [UInt8], as format: Format) -> [UInt8] {
        let lines = String(decoding: exposition, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true)
        // Counters' families, from their TYPE lines.
        let counters = Set(lines.compactMap { line -> Substring? in
            let words = line.split(separator: " ")
            return words.count == 4 && words[1] == "TYPE" && words[3] == "counter" ? words[2] : nil
        })
        var text = ""
        for line in lines {
            if line.hasPrefix("#") {
                var words = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                if format == .openMetrics, words.count >= 3, counters.contains(words[2]), words[2].hasSuffix("_total") {
                    words[2] = words[2].dropLast("_total".count)
                }
                text += words.joined(separator: " ") + "\n"
                continue
            }
            guard let space = line.lastIndex(of: " ") else {
                text += line + "\n"
                continue
            }
            let value = line[line.index(after: space)...]
            let spelled = switch value.lowercased() {
            case "nan": "NaN"
            case "inf", "+inf": "+Inf"
            case "-inf": "-Inf"
            default: String(value)
            }
            text += line[..<space] + " " + spelled + "\n"
        }
        if format == .openMetrics { text += "# EOF\n" }
        return Array(text.utf8)
    }
}
