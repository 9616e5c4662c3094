import Foundation

/// An SVG graph against frequency, as audio people draw it: a logarithmic
/// frequency axis (decades and their 2 and 5), a linear axis in dB or
/// degrees, one polyline per series, a legend. Plain SVG, no script. With
/// `levelAxis` the horizontal axis is linear instead, for a figure against
/// level in dBFS (THD+N against level).
struct FrequencyPlot {
    struct Series {
        let name: String
        let points: [(frequency: Double, value: Double)]
    }

    let id: String
    let unit: String
    let frequencies: ClosedRange<Double>
    var series: [Series]
    /// The value axis; nil: from the data, to round steps.
    var values: ClosedRange<Double>?
    /// A linear horizontal axis in this unit (e.g. "dBFS") instead of a logarithmic one in hertz.
    var levelAxis: String?
    static let width = 1000.0, height = 300.0, left = 56.0, bottom = 28.0, top = 10.0, right = 250.0
    static let colors = ["#1f4e9c", "#c0392b", "#2a8a2a", "#8e44ad", "#d68910", "#117a8b", "#555"]

    var svg: String {
        let finite = series.flatMap { $0.points.map(\.value) }.filter(\.isFinite)
        let range = values ?? Self.niceRange(finite.min() ?? -1, finite.max() ?? 1)
        let plotWidth = Self.width - Self.left - Self.right, plotHeight = Self.height - Self.top - Self.bottom
        func x(_ frequency: Double) -> Double {
            guard levelAxis == nil else {
                return Self.left + plotWidth * (frequency - frequencies.lowerBound) / (frequencies.upperBound - frequencies.lowerBound)
            }
            return Self.left + plotWidth * log(frequency / frequencies.lowerBound) / log(frequencies.upperBound / frequencies.lowerBound)
        }
        func y(_ value: Double) -> Double {
            Self.top + plotHeight * (1 - (min(max(value, range.lowerBound), range.upperBound) - range.lowerBound)
                                       / (range.upperBound - range.lowerBound))
        }
        func f(_ value: Double) -> String { String(format: "%.1f", value) }
        var svg = "<svg id=\"\(id)\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(Self.width))\" height=\"\(Int(Self.height))\" "
            + "viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.height))\" font-size=\"11\" font-family=\"system-ui, sans-serif\">"
        /// A vertical grid line at `at` on the horizontal axis, labelled below.
        func gridLine(_ at: Double, _ label: String, stroke: String = "#eee") {
            svg += "<line x1=\"\(f(x(at)))\" x2=\"\(f(x(at)))\" y1=\"\(f(Self.top))\" y2=\"\(f(Self.top + plotHeight))\" stroke=\"\(stroke)\"/>"
            svg += "<text x=\"\(f(x(at)))\" y=\"\(f(Self.height - 10))\" text-anchor=\"middle\" fill=\"#555\">\(label)</text>"
        }
        if let levelAxis {
            // Level grid: round steps, and the axis's unit.
            let step = Self.niceStep(frequencies.upperBound - frequencies.lowerBound)
            var level = (frequencies.lowerBound / step).rounded(.up) * step
            while level <= frequencies.upperBound + step / 1000 {
                gridLine(level, Self.trimmed(level))
                level += step
            }
            svg += "<text x=\"\(f(Self.left + plotWidth + 6))\" y=\"\(f(Self.height - 10))\" fill=\"#555\">\(ReportPage.escape(levelAxis))</text>"
        }
        // Frequency grid: 1, 2, 5 of every decade in range.
        var decade = pow(10, floor(log10(frequencies.lowerBound)))
        while levelAxis == nil, decade <= frequencies.upperBound {
            for step in [1.0, 2, 5] where frequencies.contains(step * decade) {
                gridLine(step * decade, step * decade >= 1000 ? "\(Self.trimmed(step * decade / 1000))k" : Self.trimmed(step * decade),
                         stroke: step == 1 ? "#ccc" : "#eee")
            }
            decade *= 10
        }
        // Value grid.
        let step = Self.niceStep(range.upperBound - range.lowerBound)
        var value = (range.lowerBound / step).rounded(.up) * step
        while value <= range.upperBound + step / 1000 {
            svg += "<line x1=\"\(f(Self.left))\" x2=\"\(f(Self.left + plotWidth))\" y1=\"\(f(y(value)))\" y2=\"\(f(y(value)))\" stroke=\"#eee\"/>"
            svg += "<text x=\"\(f(Self.left - 6))\" y=\"\(f(y(value) + 4))\" text-anchor=\"end\" fill=\"#555\">\(Self.trimmed(value))</text>"
            value += step
        }
        svg += "<text x=\"12\" y=\"\(f(Self.top + plotHeight / 2))\" transform=\"rotate(-90 12 \(f(Self.top + plotHeight / 2)))\" "
            + "text-anchor=\"middle\" fill=\"#555\">\(ReportPage.escape(unit))</text>"
        svg += "<rect x=\"\(f(Self.left))\" y=\"\(f(Self.top))\" width=\"\(f(plotWidth))\" height=\"\(f(plotHeight))\" fill=\"none\" stroke=\"#999\"/>"
        for (index, one) in series.enumerated() {
            let color = Self.colors[index % Self.colors.count]
            // A break where a value is not finite (digital silence, nothing told).
            var runs: [[String]] = [[]]
            for point in one.points where frequencies.contains(point.frequency) {
                if point.value.isFinite { runs[runs.count - 1].append("\(f(x(point.frequency))),\(f(y(point.value)))") } else { runs.append([]) }
            }
            for run in runs where run.count > 1 {
                svg += "<polyline class=\"series\" data-series=\"\(ReportPage.escape(one.name))\" fill=\"none\" stroke=\"\(color)\" "
                    + "stroke-width=\"1.5\" points=\"\(run.joined(separator: " "))\"/>"
            }
            let legendY = Self.top + 14 + Double(index) * 16
            svg += "<line x1=\"\(f(Self.width - Self.right + 10))\" x2=\"\(f(Self.width - Self.right + 28))\" y1=\"\(f(legendY - 4))\" "
                + "y2=\"\(f(legendY - 4))\" stroke=\"\(color)\" stroke-width=\"2\"/>"
            svg += "<text x=\"\(f(Self.width - Self.right + 32))\" y=\"\(f(legendY))\" fill=\"#333\">\(ReportPage.escape(one.name))</text>"
        }
        return svg + "</svg>"
    }

    /// A range to round steps around `low`...`high` (at least 1 wide).
    static func niceRange(_ low: Double, _ high: Double) -> ClosedRange<Double> {
        let span = max(high - low, 1)
        let step = niceStep(span)
        return (floor(low / step) * step - (high - low < 1 ? step : 0))...(ceil(high / step) * step + (high - low < 1 ? step : 0))
    }

    /// About five grid lines over `span`: 1, 2 or 5 times a power of ten.
    static func niceStep(_ span: Double) -> Double {
        let raw = span / 5
        let power = pow(10, floor(log10(raw)))
        return [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? power * 10
    }

    static func trimmed(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }
}
