import ArgumentParser
import ComplianceReport
import Foundation
import Metering

/// `jas report`: a compliance report to look at, from the records jas keeps.
struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a compliance report (one HTML page, and CSV) from jas meter logs and jas record manifests.",
        discussion: """
            The page needs no network: an SVG graph of momentary, short-term and integrated loudness and of \
            true peak over the period, with the target band, the alarms, silences and gaps marked, and a \
            table per clock hour (the meter's own integrated loudness and LRA from its log's hour lines, the \
            highest short-term loudness and true peak, time out of tolerance, silence, gaps). --csv writes \
            the log's intervals (a manifest's files) for a spreadsheet. Times are ISO 8601 or as people type \
            them (14:32, '2026-11-20 14:32:10'), local time without a zone.
            """
    )

    @Argument(help: "Compliance logs (jas meter --log) and take manifests (jas record), any number.")
    var records: [String]

    @Option(help: "The period's start, e.g. 2026-11-20T06:00 or 06:00.")
    var from: String?

    @Option(help: "The period's end.")
    var to: String?

    @Option(help: "The HTML page to write.")
    var output: String

    @Option(help: "Also write the intervals as CSV to this file.")
    var csv: String?

    @Option(parsing: .unconditional, help: "The target to judge against, r128 or a85 (default: the one the log's alarms were raised against, else r128).")
    var loudness: String?

    @Flag(help: "Replace the page and the CSV if they exist.")
    var overwrite = false

    func validate() throws {
        guard !records.isEmpty else { throw ValidationError("give a compliance log or a manifest") }
        _ = try period(now: Date().timeIntervalSince1970)
        _ = try target()
    }

    func period(now: Double) throws -> (from: Double?, to: Double?) {
        let start = try from.map { try WallClockTime.parse($0, option: "--from", now: now) }
        let end = try to.map { try WallClockTime.parse($0, option: "--to", now: now) }
        if let start, let end, end <= start { throw ValidationError("--to must come after --from") }
        return (start, end)
    }

    func target() throws -> LoudnessTarget? {
        guard let loudness else { return nil }
        guard let named = LoudnessTarget.named(loudness) else {
            throw ValidationError(LoudnessTarget.unknownStandard(loudness, option: "--loudness", targetOption: false))
        }
        return named
    }

    func run() throws {
        for path in [output] + (csv.map { [$0] } ?? []) where FileManager.default.fileExists(atPath: path) && !overwrite {
            Output.diagnostic("jas report: '\(Output.safe(path))' exists; choose another name or add --overwrite")
            throw ExitCode(2)
        }
        let (start, end) = try period(now: Date().timeIntervalSince1970)
        do {
            let record = try ComplianceRecord(paths: records, from: start, to: end)
            guard record.span != nil else { throw ReportError.empty(from: from, to: to) }
            let title = "Loudness compliance: " + records.map { ($0 as NSString).lastPathComponent }.joined(separator: ", ")
            try write(ReportPage.html(record, target: try target(), title: title), to: output)
            if let csv { try write(ReportTable.csv(record), to: csv) }
            Output.diagnostic("wrote '\(Output.safe(output))'" + (csv.map { " and '\(Output.safe($0))'" } ?? "")
                              + ": \(record.points.count) points, \(record.marks.count) marks")
        } catch let error as ReportError {
            Output.diagnostic("jas report: \(Output.safe(error.description))")
            throw ExitCode(2)
        }
    }

    private func write(_ text: String, to path: String) throws(ReportError) {
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw .unwritable(path: path, reason: error.localizedDescription)
        }
    }
}
