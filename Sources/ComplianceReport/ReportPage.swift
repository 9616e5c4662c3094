import Foundation
import Metering

/// A compliance report as one self-contained HTML page (no script, no
/// network): an SVG graph of loudness and true peak over the period with
/// the target band, alarms, silences and gaps marked; a table per clock
/// hour; and the sources it was made from. A day of one-second points is
/// drawn as one column per pixel (the highest value in it), so the page
/// stays small and opens at once.
public enum ReportPage {
    static let width = 1200.0, height = 320.0, peakHeight = 110.0
    static let low = -50.0, high = -5.0, peakLow = -30.0, peakHigh = 3.0

    public static func html(_ record: ComplianceRecord, target given: LoudnessTarget?, title: String) throws(ReportError) -> String {
        guard let span = record.span, span.to > span.from else { throw .empty(from: nil, to: nil) }
        let target = given ?? record.target ?? .r128
        let hours = hourRows(record, target: target)
        var page = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
            h1 { font-size: 20px; margin: 0 0 .3em; } h2 { font-size: 16px; margin: 1.5em 0 .5em; }
            table { border-collapse: collapse; } td, th { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; font-variant-numeric: tabular-nums; }
            th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
            .out { color: #b00; font-weight: bold; } .key span { display: inline-block; width: 1em; height: .8em; margin: 0 .3em 0 1em; vertical-align: middle; }
            svg { display: block; border: 1px solid #ccc; margin-top: .5em; background: #fff; }
            </style></head><body>
            <h1>\(escape(title))</h1>
            <p>\(iso(span.from)) to \(iso(span.to)) (UTC) · target \(escape(target.description)) · from \(record.sources.map { escape(($0 as NSString).lastPathComponent) }.joined(separator: ", "))</p>
            \(summary(record, span: span, target: target))
            <h2>Loudness</h2>
            <div class="key"><span style="background:rgba(60,140,255,.3)"></span>target band<span style="background:#1f4e9c"></span>short-term (highest per column)<span style="background:#9ab"></span>momentary<span style="background:#2a2;height:2px"></span>integrated (programme)<span style="background:rgba(220,40,40,.35)"></span>alarm<span style="background:rgba(230,170,0,.4)"></span>silence<span style="background:repeating-linear-gradient(45deg,#bbb 0 3px,#eee 3px 6px)"></span>gap</div>
            \(graph(record, span: span, target: target))
            <h2>True peak</h2>
            \(peakGraph(record, span: span, target: target))
            <h2>Per hour</h2>
            <table id="hours"><tr><th>Hour (UTC)</th><th>Integrated LUFS</th><th>LRA LU</th><th>Max short-term LUFS</th><th>Max true peak dBTP</th><th>Out of tolerance</th><th>Silence</th><th>Gaps</th><th>Metered</th></tr>
            """
        for row in hours {
            let integrated = row.integrated.map { String(format: "%.1f", $0) } ?? "–"
            let out = row.integrated.map { abs($0 - target.targetLUFS) > target.toleranceLU } ?? false
            page += "<tr data-from=\"\(iso(row.from))\" data-integrated=\"\(row.integrated.map { String(format: "%.2f", $0) } ?? "")\">"
                + "<td>\(iso(row.from).prefix(16).replacingOccurrences(of: "T", with: " "))</td>"
                + "<td\(out ? " class=\"out\"" : "")>\(integrated)</td>"
                + "<td>\(row.range.map { String(format: "%.1f", $0) + (row.rangeSettled ? "" : " (unsettled)") } ?? "–")</td>"
                + "<td>\(figure(row.maxShortTerm))</td><td\((row.truePeak ?? -.infinity) > target.maxTruePeakDBTP ? " class=\"out\"" : "")>\(figure(row.truePeak))</td>"
                + "<td>\(duration(row.outOfTolerance))</td><td>\(duration(row.silence))</td><td>\(duration(row.gaps))</td>"
                + "<td>\(duration(row.metered))</td></tr>\n"
        }
        page += "</table>\n<p style=\"color:#777\">Made by jas report from the records jas keeps; the hours' loudness is the meter's own (its hour lines), "
            + "time out of tolerance is the time a loudness alarm was on.</p>\n</body></html>\n"
        return page
    }

    /// One row per clock hour: the meter's own figures where the log has them, the marks' time in it.
    struct HourRow {
        var from: Double
        var integrated, range, maxShortTerm, truePeak: Double?
        var rangeSettled = true
        var outOfTolerance = 0.0, silence = 0.0, gaps = 0.0, metered = 0.0
    }

    static func hourRows(_ record: ComplianceRecord, target: LoudnessTarget) -> [HourRow] {
        guard let span = record.span else { return [] }
        var rows: [HourRow] = []
        var hour = (span.from / 3600).rounded(.down) * 3600
        while hour < span.to {
            let end = hour + 3600
            var row = HourRow(from: hour)
            if let measured = record.periods.last(where: { $0.kind == "hour" && abs($0.from - hour) < 1 }) {
                row.integrated = measured.integratedLUFS
                row.range = measured.loudnessRangeLU
                row.rangeSettled = measured.loudnessRangeSettled
                row.maxShortTerm = measured.maxShortTermLUFS
                row.truePeak = measured.truePeakDBTP
                row.metered = measured.meteredSeconds
            } else {
                let inside = record.points.filter { $0.from < end && $0.to > hour }
                row.maxShortTerm = inside.compactMap(\.maxShortTermLUFS).max()
                row.truePeak = inside.compactMap(\.truePeakDBTP).max()
                row.metered = inside.reduce(0) { $0 + min($1.to, end) - max($1.from, hour) }
            }
            func overlap(_ kind: ComplianceRecord.Mark.Kind, _ accept: (String) -> Bool = { _ in true }) -> Double {
                record.marks.filter { $0.kind == kind && accept($0.detail) }
                    .reduce(0) { $0 + max(0, min($1.to, end) - max($1.from, hour)) }
            }
            row.outOfTolerance = overlap(.alarm) { $0 == "too_loud" || $0 == "too_quiet" }
            row.silence = overlap(.silence)
            row.gaps = overlap(.gap)
            rows.append(row)
            hour = end
        }
        return rows
    }

    static func summary(_ record: ComplianceRecord, span: (from: Double, to: Double), target: LoudnessTarget) -> String {
        func total(_ kind: ComplianceRecord.Mark.Kind) -> Double { record.marks.filter { $0.kind == kind }.reduce(0) { $0 + $1.to - $1.from } }
        let alarms = record.marks.filter { $0.kind == .alarm }
        let peak = record.points.compactMap(\.truePeakDBTP).max()
        return "<table id=\"summary\"><tr><th>Period</th><th>Alarms</th><th>Time in alarm</th><th>Silence</th><th>Gaps</th><th>Max true peak dBTP</th></tr>"
            + "<tr><td>\(duration(span.to - span.from))</td><td>\(alarms.count)</td><td>\(duration(total(.alarm)))</td>"
            + "<td>\(duration(total(.silence)))</td><td>\(duration(total(.gap)))</td>"
            + "<td\((peak ?? -.infinity) > target.maxTruePeakDBTP ? " class=\"out\"" : "")>\(figure(peak))</td></tr></table>"
    }

    // MARK: - The graphs

    static func graph(_ record: ComplianceRecord, span: (from: Double, to: Double), target: LoudnessTarget) -> String {
        let x = { (t: Double) in (t - span.from) / (span.to - span.from) * width }
        let y = { (lufs: Double) in height - (min(high, max(low, lufs)) - low) / (high - low) * height }
        var svg = "<svg id=\"loudness\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height + 20))\" viewBox=\"0 0 \(Int(width)) \(Int(height + 20))\">"
        svg += marks(record, x: x, height: height)
        let bandTop = y(target.targetLUFS + target.toleranceLU), bandBottom = y(target.targetLUFS - target.toleranceLU)
        svg += "<rect class=\"band\" x=\"0\" y=\"\(f(bandTop))\" width=\"\(Int(width))\" height=\"\(f(max(1, bandBottom - bandTop)))\" fill=\"rgba(60,140,255,.3)\"/>"
        for lufs in stride(from: low + 5, to: high, by: 5) {
            svg += "<line x1=\"0\" x2=\"\(Int(width))\" y1=\"\(f(y(lufs)))\" y2=\"\(f(y(lufs)))\" stroke=\"#eee\"/>"
                + "<text x=\"3\" y=\"\(f(y(lufs) - 2))\" font-size=\"10\" fill=\"#888\">\(Int(lufs))</text>"
        }
        svg += path(record, \.maxMomentaryLUFS, x: x, y: y, color: "#9ab", width: 1)
        svg += path(record, \.maxShortTermLUFS, x: x, y: y, color: "#1f4e9c", width: 1.5, id: "short-term")
        svg += path(record, \.integratedLUFS, x: x, y: y, color: "#2a2", width: 1.5)
        svg += timeAxis(span, x: x, y: height)
        return svg + "</svg>"
    }

    static func peakGraph(_ record: ComplianceRecord, span: (from: Double, to: Double), target: LoudnessTarget) -> String {
        let x = { (t: Double) in (t - span.from) / (span.to - span.from) * width }
        let y = { (db: Double) in peakHeight - (min(peakHigh, max(peakLow, db)) - peakLow) / (peakHigh - peakLow) * peakHeight }
        var svg = "<svg id=\"true-peak\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(peakHeight + 20))\">"
        svg += marks(record, x: x, height: peakHeight)
        svg += "<line x1=\"0\" x2=\"\(Int(width))\" y1=\"\(f(y(target.maxTruePeakDBTP)))\" y2=\"\(f(y(target.maxTruePeakDBTP)))\" stroke=\"#d22\" stroke-dasharray=\"4 3\"/>"
            + "<text x=\"3\" y=\"\(f(y(target.maxTruePeakDBTP) - 2))\" font-size=\"10\" fill=\"#d22\">\(figure(target.maxTruePeakDBTP)) dBTP</text>"
        svg += path(record, \.truePeakDBTP, x: x, y: y, color: "#444", width: 1, id: "peak")
        svg += timeAxis(span, x: x, y: peakHeight)
        return svg + "</svg>"
    }

    static func marks(_ record: ComplianceRecord, x: (Double) -> Double, height: Double) -> String {
        record.marks.map { mark in
            let fill = switch mark.kind {
            case .alarm: "rgba(220,40,40,.35)"
            case .silence: "rgba(230,170,0,.4)"
            case .gap: "url(#hatch)"
            }
            return "<rect class=\"\(mark.kind.rawValue)\" data-from=\"\(iso(mark.from))\" data-to=\"\(iso(mark.to))\" data-detail=\"\(escape(mark.detail))\" "
                + "x=\"\(f(x(mark.from)))\" y=\"0\" width=\"\(f(max(1, x(mark.to) - x(mark.from))))\" height=\"\(f(height))\" fill=\"\(fill)\">"
                + "<title>\(escape(mark.detail)): \(iso(mark.from)) to \(iso(mark.to))</title></rect>"
        }.joined()
            + "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
            + "<rect width=\"6\" height=\"6\" fill=\"#eee\"/><rect width=\"3\" height=\"6\" fill=\"#bbb\"/></pattern></defs>"
    }

    /// The highest value per pixel column; no line across a column without points (a gap).
    static func path(_ record: ComplianceRecord, _ value: KeyPath<ComplianceRecord.Point, Double?>, x: (Double) -> Double,
                     y: (Double) -> Double, color: String, width lineWidth: Double, id: String? = nil) -> String {
        var columns: [Int: Double] = [:]
        for point in record.points {
            guard let level = point[keyPath: value] else { continue }
            let first = Int(x(point.from).rounded(.down)), last = max(first, Int(x(point.to).rounded(.up)) - 1)
            for column in first...last { columns[column] = max(columns[column] ?? -.infinity, level) }
        }
        var d = ""
        var previous: Int?
        for column in columns.keys.sorted() {
            d += (previous == column - 1 ? "L" : "M") + "\(column) \(f(y(columns[column]!))) "
            previous = column
        }
        let name = id.map { " id=\"\($0)\" data-columns=\"\(columns.count)\"" } ?? ""
        return "<path\(name) d=\"\(d)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(lineWidth)\"/>"
    }

    static func timeAxis(_ span: (from: Double, to: Double), x: (Double) -> Double, y: Double) -> String {
        let length = span.to - span.from
        let step = [1, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 14400, 21600].map(Double.init).first { length / $0 <= 12 } ?? 43200
        var axis = ""
        var tick = (span.from / step).rounded(.up) * step
        while tick <= span.to {
            let label = iso(tick).dropFirst(11).prefix(step < 60 ? 8 : 5)
            axis += "<line x1=\"\(f(x(tick)))\" x2=\"\(f(x(tick)))\" y1=\"\(f(y))\" y2=\"\(f(y + 5))\" stroke=\"#888\"/>"
                + "<text x=\"\(f(x(tick) + 2))\" y=\"\(f(y + 15))\" font-size=\"10\" fill=\"#666\">\(label)</text>"
            tick += step
        }
        return axis
    }

    // MARK: - Words and numbers

    static func iso(_ utc: Double) -> String { LoudnessLogLine.iso(utc) }
    static func f(_ value: Double) -> String { String(format: "%.1f", value) }
    static func figure(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "–" }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole >= 3600 ? String(format: "%d h %02d min", whole / 3600, whole % 3600 / 60)
            : whole >= 60 ? String(format: "%d min %02d s", whole / 60, whole % 60)
            : seconds < 10 ? String(format: "%.1f s", seconds) : "\(whole) s"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// The report's points as CSV for a spreadsheet: one row per interval of a log (per file of a take).
public enum ReportTable {
    public static func csv(_ record: ComplianceRecord) -> String {
        func cell(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "" }
        var text = "from,to,max_momentary_lufs,max_short_term_lufs,short_term_lufs,integrated_lufs,true_peak_dbtp,sample_peak_dbfs,paused\n"
        for point in record.points {
            text += [ReportPage.iso(point.from), ReportPage.iso(point.to), cell(point.maxMomentaryLUFS), cell(point.maxShortTermLUFS),
                     cell(point.shortTermLUFS), cell(point.integratedLUFS), cell(point.truePeakDBTP), cell(point.samplePeakDBFS),
                     point.paused ? "true" : "false"].joined(separator: ",") + "\n"
        }
        return text
    }
}
