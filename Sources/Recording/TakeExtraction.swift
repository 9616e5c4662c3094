import Foundation
import SoundFile

/// A clip cut from a logged take by wall-clock time, across its files: the
/// frames of each file from the manifest (a file's frames spread evenly
/// between its first frame's and its end's UTC, both measured), the time
/// between files that holds no audio (a full disk, a restart) as silence,
/// every gap listed. Plan first (`init`), then `write(to:)`.
public struct TakeExtraction: Sendable {
    /// One stretch of the clip: frames of a file, or silence.
    public enum Piece: Sendable, Equatable {
        /// Frames `fromFrame..<fromFrame + frames` of the file at `path`.
        case file(path: String, fromFrame: Int64, frames: Int64)
        /// Silence the logger has no audio for, and why.
        case silence(frames: Int64, reason: String)
    }

    /// A stretch of the clip that is silence the logger wrote or could not
    /// write: where in the clip, how long, why.
    public struct Gap: Sendable, Equatable {
        /// Where in the clip, frames from its start.
        public var atFrame: Int64
        /// How many frames of silence.
        public var frames: Int64
        /// Why there is no audio there, as the manifest says.
        public var reason: String
    }

    /// Why a clip cannot be cut.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The times asked for lie (partly) where the logger has no audio; what it has.
        case noAudio(fromUTC: Double, toUTC: Double, ranges: [ClosedRange<Double>])
        /// The range spans files at different rates or channel counts.
        case formatChanges(String)
        /// The range asked for is empty (its end is not after its start).
        case emptyRange

        public var description: String {
            switch self {
            case let .noAudio(from, to, ranges):
                let nearest = ranges.sorted { distance($0, from, to) < distance($1, from, to) }.prefix(3)
                    .sorted { $0.lowerBound < $1.lowerBound }
                return "the take has no audio for all of \(ManifestLine.iso(from)) to \(ManifestLine.iso(to))"
                    + (nearest.isEmpty ? " (its manifest lists no files)"
                       : "; it has " + nearest.map { "\(ManifestLine.iso($0.lowerBound)) to \(ManifestLine.iso($0.upperBound))" }
                        .joined(separator: ", "))
            case let .formatChanges(reason): return reason
            case .emptyRange: return "the end must come after the start"
            }
        }

        private func distance(_ range: ClosedRange<Double>, _ from: Double, _ to: Double) -> Double {
            max(0, range.lowerBound - to, from - range.upperBound)
        }
    }

    /// The clip's start, UTC seconds since 1970.
    public let fromUTC: Double
    /// The clip's end, UTC seconds since 1970.
    public let toUTC: Double
    /// Frames a second of the clip.
    public let sampleRate: Int
    /// Channels of the clip.
    public let channels: Int
    /// The clip's stretches, in order.
    public private(set) var pieces: [Piece] = []
    /// The clip's stretches of silence, with their reasons.
    public private(set) var gaps: [Gap] = []
    /// The clip's first frame: samples since its midnight, and the zone's offset there.
    public let timeReference: UInt64
    /// The zone's offset east of UTC at the clip's first frame, seconds.
    public let utcOffset: Int
    /// Frames in the clip.
    public var frames: Int64 {
        pieces.reduce(0) { total, piece in
            switch piece {
            case let .file(_, _, frames), let .silence(frames, _): total + frames
            }
        }
    }

    /// Whether `file` is the next set of `previous`'s take, its frames the
    /// very next ones (no audio left unwritten before it), begun less than
    /// `continuationSlack` after `previous` ended. A start later than that
    /// end is then time the server's clock jumped by before the cut, which
    /// the frame clock measured into the new file's start only (a set begun
    /// before the clock settled is timed again): no audio is missing there,
    /// so no silence is made up for it, and the clip goes on as a single-file
    /// take of the same ports does.
    static func continues(_ file: ManifestLine, _ previous: ManifestLine?) -> Bool {
        guard let previous, let previousEnd = previous.endUTC, file.index == previous.index + 1,
              !(file.gaps ?? []).contains(where: { !$0.written }) else { return false }
        return file.startUTC - previousEnd < continuationSlack
    }

    /// How much later than its predecessor's end a continuing set may start (seconds).
    static let continuationSlack = 0.1

    /// The stretches of wall-clock time the manifest's files cover (files
    /// that follow on within a millisecond are one stretch).
    public static func coverage(_ files: [ManifestLine]) -> [ClosedRange<Double>] {
        var ranges: [ClosedRange<Double>] = []
        for file in files {
            let end = file.endUTC ?? file.startUTC
            if let last = ranges.last, file.startUTC - last.upperBound < 0.001 {
                ranges[ranges.count - 1] = last.lowerBound...max(last.upperBound, end)
            } else {
                ranges.append(file.startUTC...end)
            }
        }
        return ranges
    }

    /// Plans the clip from `fromUTC` to `toUTC` out of `manifest`'s files.
    public init(manifest: TakeManifest, fromUTC: Double, toUTC: Double) throws(Refusal) {
        guard toUTC > fromUTC else { throw .emptyRange }
        self.fromUTC = fromUTC
        self.toUTC = toUTC
        let files = manifest.closedFiles.filter { FileManager.default.fileExists(atPath: manifest.resolve($0.path)) }
        let ranges = Self.coverage(files)
        guard let first = ranges.first, let last = ranges.last,
              first.lowerBound <= fromUTC + 0.0005, last.upperBound >= toUTC - 0.0005 else {
            throw .noAudio(fromUTC: fromUTC, toUTC: toUTC, ranges: ranges)
        }
        let used = files.filter { ($0.endUTC ?? $0.startUTC) > fromUTC && $0.startUTC < toUTC }
        guard let head = used.first else { throw .noAudio(fromUTC: fromUTC, toUTC: toUTC, ranges: ranges) }
        if let other = used.first(where: { $0.sampleRate != head.sampleRate || $0.channels != head.channels }) {
            throw .formatChanges("the range spans files of different formats (\(head.path): \(head.channels) channel(s) at "
                                 + "\(head.sampleRate) Hz, \(other.path): \(other.channels) at \(other.sampleRate) Hz); "
                                 + "cut it in two at \(ManifestLine.iso(other.startUTC))")
        }
        sampleRate = head.sampleRate
        channels = head.channels
        utcOffset = head.utcOffset
        let rate = Double(sampleRate)
        var reachedUTC = fromUTC
        var clipFrames: Int64 = 0
        var firstFrameOfClip: (file: ManifestLine, frame: Int64)?
        var previous: ManifestLine?
        for file in used {
            let end = file.endUTC ?? file.startUTC
            let frames = file.frames ?? 0
            // A file's frames spread evenly over its measured span.
            func frame(at utc: Double) -> Int64 {
                guard end > file.startUTC else { return 0 }
                return min(frames, max(0, Int64(((utc - file.startUTC) / (end - file.startUTC) * Double(frames)).rounded())))
            }
            defer { previous = file }
            if !Self.continues(file, previous), file.startUTC - reachedUTC >= 0.5 / rate {
                let silent = Int64(((file.startUTC - reachedUTC) * rate).rounded())
                let reason = file.gaps?.first { !$0.written }?.reason ?? "no recording"
                gaps.append(Gap(atFrame: clipFrames, frames: silent, reason: reason))
                pieces.append(.silence(frames: silent, reason: reason))
                clipFrames += silent
            }
            let from = frame(at: max(fromUTC, file.startUTC)), to = frame(at: min(toUTC, end))
            guard to > from else { continue }
            if firstFrameOfClip == nil { firstFrameOfClip = (file, from) }
            for gap in file.gaps ?? [] where gap.written && gap.atFrame + gap.frames > from && gap.atFrame < to {
                let start = max(gap.atFrame, from)
                gaps.append(Gap(atFrame: clipFrames + start - from, frames: min(gap.atFrame + gap.frames, to) - start,
                                reason: gap.reason))
            }
            pieces.append(.file(path: manifest.resolve(file.path), fromFrame: from, frames: to - from))
            clipFrames += to - from
            reachedUTC = min(toUTC, end)
        }
        if let (file, frame) = firstFrameOfClip, let reference = file.timeReference {
            let day = UInt64(86_400 * sampleRate)
            timeReference = (reference + UInt64(frame)) % day
        } else {
            let local = fromUTC + Double(utcOffset)
            timeReference = UInt64((local - (local / 86_400).rounded(.down) * 86_400) * rate)
        }
    }

    /// Writes the clip to `path` (its format from `format`), with a `bext`
    /// whose TimeReference is its first frame's.
    public func write(to path: String, format: RecordingFormat) throws(RecordingError) {
        let writer = try SoundFileWriter(path: path, channels: channels, sampleRate: sampleRate, format: format)
        let zone = RecordingTimeZone.zone(TimeZone(secondsFromGMT: utcOffset) ?? .gmt)
        writer.setBroadcastExtension(description: "jas extract, \(ManifestLine.iso(fromUTC)) to \(ManifestLine.iso(toUTC))",
                                     originator: "JackAudioSession jas extract", origination: fromUTC, zone: zone,
                                     timeReference: timeReference)
        let block = 65_536
        var buffer = [Float](repeating: 0, count: block * channels)
        for piece in pieces {
            switch piece {
            case let .silence(frames, _):
                buffer.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
                var left = frames
                while left > 0 {
                    let count = Int(min(left, Int64(block)))
                    try buffer.withUnsafeBufferPointer { (samples) throws(RecordingError) in
                        try writer.write(samples.baseAddress!, frames: count)
                    }
                    left -= Int64(count)
                }
            case let .file(source, from, frames):
                let reader: SoundFileReader
                do { reader = try SoundFileReader(path: source) } catch { throw .file(path: source, reason: error.description) }
                guard reader.seek(toFrame: from) else { throw .file(path: source, reason: "cannot seek to frame \(from)") }
                var left = frames
                while left > 0 {
                    let want = Int(min(left, Int64(block)))
                    let got = buffer.withUnsafeMutableBufferPointer { reader.read(into: $0.baseAddress!, frames: want) }
                    guard got > 0 else { throw .file(path: source, reason: "ends before frame \(from + frames)") }
                    try buffer.withUnsafeBufferPointer { (samples) throws(RecordingError) in
                        try writer.write(samples.baseAddress!, frames: got)
                    }
                    left -= Int64(got)
                }
            }
        }
        writer.close()
    }
}
