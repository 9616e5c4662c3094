import ArgumentParser
import Foundation
import Recording

/// `jas extract`: a clip of a logged take by wall-clock time.
struct Extract: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Cut a clip from a logged take by time, across its files, sample-exact.",
        discussion: """
            Reads the take's manifest (written by jas record beside its files). Times are ISO 8601 \
            (2026-11-20T14:32:10, with or without a zone: Z, +01:00) or as people type them \
            (14:32:10 or 14:32 for today, '2026-11-20 14:32:10'); without a zone they are local time ($TZ). \
            Time the take has no audio for inside the clip (a full disk, a restart) is silence, and listed. \
            The clip's bext TimeReference is its first frame's.
            """
    )

    @Argument(help: "The take's manifest, e.g. /srv/log/log.manifest.jsonl.")
    var manifest: String

    @Option(help: "The clip's first moment, e.g. 2026-11-20T14:32:10 or 14:32:10.")
    var from: String

    @Option(help: "The moment after its last frame (or --for).")
    var to: String?

    @Option(name: .customLong("for"), help: "The clip's length, e.g. 30s or 5min (or --to).")
    var length: String?

    @Option(help: "The clip to write (WAV, RF64, W64 or FLAC by its extension).")
    var output: String

    @Flag(help: "Replace the clip if it exists.")
    var overwrite = false

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func validate() throws {
        guard (to == nil) != (length == nil) else { throw ValidationError("give the clip's end: --to TIME or --for DURATION (one of them)") }
        _ = try range(now: Date().timeIntervalSince1970)
    }

    func range(now: Double) throws -> (from: Double, to: Double) {
        let start = try WallClockTime.parse(from, option: "--from", now: now)
        if let to { return (start, try WallClockTime.parse(to, option: "--to", now: now)) }
        let seconds = try OptionCheck.duration(length ?? "", "--for", in: 0.001...OptionCheck.longestRun, example: "30s or 5min")
        return (start, start + seconds)
    }

    func run() throws {
        guard FileManager.default.fileExists(atPath: manifest) else {
            Output.diagnostic("jas extract: no manifest at '\(Output.safe(manifest))'; give the .manifest.jsonl file jas record wrote beside the take")
            throw ExitCode(2)
        }
        if FileManager.default.fileExists(atPath: output) && !overwrite {
            Output.diagnostic("jas extract: '\(Output.safe(output))' exists; choose another name or add --overwrite")
            throw ExitCode(2)
        }
        let (start, end) = try range(now: Date().timeIntervalSince1970)
        let clip: TakeExtraction
        do {
            clip = try TakeExtraction(manifest: TakeManifest(path: manifest), fromUTC: start, toUTC: end)
        } catch {
            Output.diagnostic("jas extract: \(error.description)")
            throw ExitCode(2)
        }
        let ext = (output as NSString).pathExtension.lowercased()
        let container = RecordingFormat.Container(rawValue: ext) ?? .wav
        let format = RecordingFormat(container: container, sampleFormat: container == .flac ? .int24 : .float32)
        do {
            try clip.write(to: output, format: format)
        } catch {
            Output.diagnostic("jas extract: \(Output.reason(error))")
            throw ExitCode.failure
        }
        let sources = clip.pieces.compactMap { piece -> ClipLine.Source? in
            guard case let .file(path, from, frames) = piece else { return nil }
            return ClipLine.Source(path: path, fromFrame: from, frames: frames)
        }
        if json {
            Output.jsonEvent(ClipLine(path: output, from: ManifestLine.iso(start), to: ManifestLine.iso(end),
                                      frames: clip.frames, sampleRate: clip.sampleRate, channels: clip.channels,
                                      timeReference: clip.timeReference, sources: sources,
                                      gaps: clip.gaps.map { ClipLine.Gap(atFrame: $0.atFrame, frames: $0.frames,
                                                                         reason: $0.reason) }))
        } else {
            Output.diagnostic("wrote \(clip.frames) frames (\(String(format: "%.3f", Double(clip.frames) / Double(clip.sampleRate))) s) "
                              + "of \(ManifestLine.iso(start)) to \(ManifestLine.iso(end)) to '\(Output.safe(output))' from "
                              + "\(sources.count) file(s)")
            for gap in clip.gaps {
                Output.diagnostic("  silence: \(gap.frames) frames at frame \(gap.atFrame) of the clip (\(gap.reason))")
            }
        }
    }
}

/// A moment typed on the command line: ISO 8601 with or without a zone,
/// or a time of day (today), read in local time ($TZ) when no zone is given.
enum WallClockTime {
    static func parse(_ text: String, option: String, now: Double) throws -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let pattern = #"^(?:(\d{4})-(\d{2})-(\d{2})[T ])?(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}:?\d{2})?$"#
        guard let match = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            .firstMatch(in: trimmed, range: NSRange(trimmed.startIndex..., in: trimmed)) else {
            throw ValidationError("\(option) must be a time, e.g. 2026-11-20T14:32:10, 2026-11-20T14:32:10Z or 14:32:10, not '\(text)'")
        }
        func group(_ index: Int) -> String? {
            Range(match.range(at: index), in: trimmed).map { String(trimmed[$0]) }
        }
        var fields = tm()
        var today = time_t(now)
        localtime_r(&today, &fields)
        if let year = group(1).flatMap(Int32.init), let month = group(2).flatMap(Int32.init), let day = group(3).flatMap(Int32.init) {
            fields.tm_year = year - 1900
            fields.tm_mon = month - 1
            fields.tm_mday = day
        }
        fields.tm_hour = Int32(group(4) ?? "") ?? 0
        fields.tm_min = Int32(group(5) ?? "") ?? 0
        fields.tm_sec = Int32(group(6) ?? "") ?? 0
        let fraction = group(7).flatMap { Double("0." + $0) } ?? 0
        guard fields.tm_hour < 24, fields.tm_min < 60, fields.tm_sec < 61, (1...12).contains(fields.tm_mon + 1),
              (1...31).contains(fields.tm_mday) else {
            throw ValidationError("\(option): '\(text)' is not a time that exists")
        }
        if let zone = group(8) {
            var seconds = timegm(&fields)
            if zone.uppercased() != "Z" {
                let digits = zone.dropFirst().replacingOccurrences(of: ":", with: "")
                let offset = (Int(digits.prefix(2)) ?? 0) * 3600 + (Int(digits.suffix(2)) ?? 0) * 60
                seconds -= time_t(zone.hasPrefix("-") ? -offset : offset)
            }
            return Double(seconds) + fraction
        }
        fields.tm_isdst = -1
        return Double(mktime(&fields)) + fraction
    }
}

/// What `jas extract --json` wrote: the clip, the files it came from and its silences.
struct ClipLine: Encodable {
    var event = "clip"
    let path: String
    let from: String
    let to: String
    let frames: Int64
    let sampleRate: Int
    let channels: Int
    let timeReference: UInt64
    let sources: [Source]
    let gaps: [Gap]

    struct Source: Encodable {
        let path: String
        let fromFrame: Int64
        let frames: Int64
    }

    struct Gap: Encodable {
        let atFrame: Int64
        let frames: Int64
        let reason: String
    }
}
