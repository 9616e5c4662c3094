import Foundation
import SystemPackage

/// A take's sets of files, one after another: the take's first, a
/// rotation's, one at the rate a restarted server came back at, one after
/// a full disk. It names each set, makes its folders, claims its files (a
/// name that is taken is skipped, never replaced), opens them, stamps their
/// `bext`, knows where rotation cuts the open one, and, as each closes,
/// lets go of its files and writes its lines into the manifest with the
/// gaps the ledger holds for it.
///
/// It opens every set. The first is claimed with the take's log while the
/// take is prepared; when its name is known before its first frame (no time
/// in the pattern, or a FIFO) it is opened then too, so that a name that is
/// taken or a folder that cannot be written is refused before anything
/// runs. Otherwise it opens at the take's first frame, named by its time.
///
/// The disk thread's own once the take runs.
final class TakeFileSets {
    struct Settings {
        var naming: TakeNaming
        var format: RecordingFormat
        /// Where a new set starts (nil: one set).
        var rotation: RotationRule?
        /// The time zone of names, `bext` and the clock's boundaries.
        var zone: RecordingTimeZone = .local
        /// Whether an existing file may be replaced (`--overwrite`); else a
        /// later set skips a name that is taken.
        var overwrite = false
        /// The take's manifest (nil: none, a take to a device) and its retention.
        var catalogue: TakeCatalogue?
        var retention: RetentionKeeper?
        /// The first set's index (a restarted logger goes on from its manifest).
        var firstIndex = 1
    }

    /// Why a set opens.
    enum Reason { case first, rotation, rateChange, resume }

    let settings: Settings
    private let channels: Int
    private let ledger: TakeLedger
    private let record: @Sendable (RecordingEvent) -> Void

    /// The open set (nil: none).
    private(set) var files: RecordingFiles?
    /// Which set is open (1-based).
    private(set) var index: Int
    /// The claims on the take's files, the first with the log: each set's
    /// files are let go when it closes, the log when the take ends.
    private var claims: [OutputClaim] = []
    /// The open set's first timeline position.
    private(set) var setStart: Int64 = 0
    /// The UTC boundary the open set ends at (rotation on the clock).
    private var nextCut: Double?
    /// The open set's first frame: UTC, the zone's offset, TimeReference.
    private var setUTC = 0.0
    private var setOffset = 0
    private var setReference: UInt64?
    /// The open set's first frame in the clock's count while its time is
    /// one the clock gave before it settled (nil: the time stands).
    private var provisionalSetFrame: Int64?
    /// How the open set's start was timed, for its closed line.
    private var setTimeBasis = ManifestLine.TimeBasis.settled
    /// The time a full disk cost before the open set (in no file).
    private var unwrittenBeforeSet: ManifestLine.Gap?

    /// The sequence from the take's `first` set, prepared.
    init(settings: Settings, first: FirstSet, channels: Int, ledger: TakeLedger,
         record: @escaping @Sendable (RecordingEvent) -> Void) {
        self.settings = settings
        self.channels = channels
        self.ledger = ledger
        self.record = record
        index = settings.firstIndex
        claims = [first.claim]
        files = first.files
        if let files { ledger.opened(paths: files.paths) }
    }

    // MARK: While the take is prepared

    /// The take's first set while it is prepared: claimed with the log
    /// first, opened once nothing else can refuse the take (a file that
    /// existed is not touched before), if it is named before its first frame.
    struct FirstSet {
        let claim: OutputClaim
        /// Its paths (empty: named by its first frame, opened then).
        let paths: [String]
        /// The FIFO it is written to (nil: files).
        let fifo: FileDescriptor?
        private(set) var files: RecordingFiles?

        /// Opens the files claimed (nothing when the set is named by its first frame).
        mutating func open(channels: Int, sampleRate: Int, format: RecordingFormat) throws(RecordingError) {
            guard !paths.isEmpty, files == nil else { return }
            files = try RecordingFiles(paths: paths, channels: channels, sampleRate: sampleRate, format: format,
                                       fifo: fifo)
        }

        /// The take did not start: the files (or the FIFO not yet written to)
        /// are closed, and those the claim created go.
        func abandon() {
            if let files { files.close() } else { try? fifo?.close() }
            claim.abandon()
        }
    }

    /// Claims the take's log and the first set's `paths` (empty: it is named
    /// by its first frame; `fifo`: the FIFO it is written to). Nothing is
    /// left on a refusal.
    static func claimFirst(paths: [String], logPath: String?, overwrite: Bool, fifo: FileDescriptor?) throws(RecordingError) -> FirstSet {
        do {
            if let logPath { try makeFolders(for: [logPath]) }
            return FirstSet(claim: try OutputClaim.claim(paths: paths, logPath: logPath, overwrite: overwrite), paths: paths,
                            fifo: fifo)
        } catch {
            try? fifo?.close()
            throw error
        }
    }

    // MARK: While the take runs

    /// The take's first frame is timeline position 0: the first set opens
    /// (named by that frame's time), or the one opened ahead is stamped.
    func begin(time: TakeTime) throws(RecordingError) {
        if files == nil {
            try open(at: 0, reason: .first, time: time)
        } else {
            describeOpenSet(at: 0, time: time)
        }
    }

    /// Closes the open set and opens the next at timeline position `position`,
    /// at `time`'s rate.
    func open(at position: Int64, reason: Reason, time: TakeTime) throws(RecordingError) {
        close(time: time)
        settings.retention?.poke()
        let utc = time.utc(ofPosition: position)
        if reason != .first { index += 1 }
        do throws(RecordingError) {
            let paths = try claimFreeName(utc: utc)
            files = try RecordingFiles(paths: paths, channels: channels, sampleRate: time.sampleRate, format: settings.format)
        } catch {
            files = nil
            throw error
        }
        describeOpenSet(at: position, time: time)
        let paths = files?.paths ?? []
        ledger.opened(paths: paths)
        switch reason {
        case .first: break
        case .rotation, .resume: record(.rotated(path: paths[0], atFrame: position))
        case .rateChange: record(.newFile(path: paths[0], sampleRate: time.sampleRate, atFrame: position))
        }
    }

    /// Closes the open set and catalogues it: frames, end, gaps, SHA-256.
    func close(time: TakeTime) {
        guard let closing = files else { return }
        closing.close()
        files = nil
        for writer in closing.writers {
            if let loudness = writer.loudness { record(.fileLoudness(path: writer.path, loudness)) }
        }
        for claim in claims { claim.release(paths: closing.paths) }
        let frames = closing.framesWritten
        let (start, end) = (setStart, setStart + frames)
        let gaps = [unwrittenBeforeSet].compactMap { $0 } + ledger.gaps(inSetFrom: start, to: end)
        unwrittenBeforeSet = nil
        guard let catalogue = settings.catalogue else { return }
        let endUTC = time.utc(ofPosition: end)
        for writer in closing.writers {
            catalogue.closed(writer.path, index: index, startUTC: setUTC, endUTC: endUTC, utcOffset: setOffset,
                             sampleRate: closing.sampleRate, channels: writer.channels, frames: frames,
                             timeReference: setReference, gaps: gaps, loudness: writer.loudness, timeBasis: setTimeBasis)
        }
    }

    /// The take has ended: the last set closes and every claim, the log's too, is let go.
    func finish(time: TakeTime) {
        close(time: time)
        claims.forEach { $0.release() }
        claims = []
    }

    /// `frames` frames a full disk cost before the next set: listed among its gaps (in no file).
    func noteUnwrittenBeforeNextSet(frames: Int64) {
        unwrittenBeforeSet = ManifestLine.Gap(atFrame: 0, frames: frames, reason: "disk-full", written: false)
    }

    /// Frames from timeline position `position` to the open set's cut (nil: no rotation).
    func framesUntilCut(at position: Int64, time: TakeTime) -> Int64? {
        switch settings.rotation {
        case nil: return nil
        case let .everyFrames(frames)?: return setStart + frames - position
        case .onClock?:
            // The frame whose sound's wall time is nearest the boundary.
            guard let nextCut, let cut = time.position(atUTC: nextCut) else { return nil }
            return cut - position
        }
    }

    /// The wall clock stepped: the open set's time stays on the clock it was read by.
    func keepOpenSetTime() { provisionalSetFrame = nil }

    /// Measures the open set's first frame's time again once the frame
    /// clock has settled, if it had not when the set began: the clock tells
    /// a jump of the server's clock from late callbacks only `jumpReadings`
    /// cycles after it, so a set that began in between was timed on the line
    /// before the jump. A line that began after the set's first frame leaves
    /// its time as it was. The files' `bext` gets the new time at close; the
    /// manifest's `opened` line keeps the first reading, its `closed` line
    /// has the new one.
    func reviseOpenSetTime(time: TakeTime) {
        guard let frame = provisionalSetFrame else { return }
        if let lineStart = time.frameClock.lineStart, lineStart > frame {
            provisionalSetFrame = nil
            setTimeBasis = .kept
            return
        }
        guard time.frameClock.isSettled, let files, let utc = time.utc(ofClockFrame: frame) else { return }
        provisionalSetFrame = nil
        setTimeBasis = .revised
        let (named, reference) = stampOpenSet(utc, sampleRate: time.sampleRate)
        guard settings.format.container.carriesBroadcastExtension else { return }
        files.reviseOrigination(named, zone: settings.zone, timeReference: reference)
        if setStart == 0 { ledger.timeReference(reference) }
    }

    /// Creates the folders a set's paths need (a pattern with a folder per day).
    static func makeFolders(for paths: [String]) throws(RecordingError) {
        for path in paths {
            let folder = (path as NSString).deletingLastPathComponent
            guard !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) else { continue }
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw .unwritablePath(path: path, reason: "cannot create the folder '\(folder)': \(error.localizedDescription)")
            }
        }
    }

    // MARK: Inside

    /// The open set's paths by its first frame's time `utc`, claimed as the
    /// first set's were: a name that is taken (a file left from an earlier
    /// take, another recorder's) is skipped, never replaced.
    private func claimFreeName(utc: Double) throws(RecordingError) -> [String] {
        var refusals: [String] = []
        while true {
            let paths = settings.naming.paths(index: index, utc: utc, attempt: refusals.count)
            do {
                try Self.makeFolders(for: paths)
                claims.append(try OutputClaim.claim(paths: paths, logPath: nil, overwrite: settings.overwrite))
                for refusal in refusals { record(.partSkipped(reason: refusal)) }
                return paths
            } catch {
                // A name that is taken: the next; anything else (a folder that cannot be made) ends here.
                switch error {
                case .outputExists, .outputBusy: refusals.append(error.description)
                default: throw error
                }
                if refusals.count >= 100 { throw .noFreeName(refusals: refusals) }
            }
        }
    }

    /// The open set begins at timeline position `position`: its `bext`
    /// (origination time and TimeReference from its first frame's wall
    /// time, samples since that day's midnight in the take's zone), its
    /// `opened` lines and, rotating on the clock, the boundary it ends at.
    private func describeOpenSet(at position: Int64, time: TakeTime) {
        guard let files else { return }
        setStart = position
        let rate = time.sampleRate
        let utc = time.utc(ofPosition: position)
        let zone = settings.zone
        let (named, reference) = stampOpenSet(utc, sampleRate: rate)
        provisionalSetFrame = time.frameClock.isSettled ? nil : position + time.positionOffset
        setTimeBasis = time.frameClock.isSettled ? .settled : .unsettled
        for writer in files.writers {
            settings.catalogue?.opened(writer.path, index: index, startUTC: utc, utcOffset: setOffset,
                                       sampleRate: rate, channels: writer.channels)
        }
        if case let .onClock(period)? = settings.rotation {
            // Past this set's own first frame (a cut lies within half a frame of its boundary).
            nextCut = zone.nextBoundary(after: utc + 1 / Double(rate), period: period)
            // Never a cut at or before the set's first frame (no empty file, whatever the clock did).
            while let cut = framesUntilCut(at: position, time: time), cut <= 0, let boundary = nextCut {
                nextCut = zone.nextBoundary(after: boundary, period: period)
            }
        }
        if settings.format.container.carriesBroadcastExtension {
            files.setBroadcastExtension(timeReference: reference, origination: named, zone: zone,
                                        description: "jas record, \(channels) channel(s) at \(rate) Hz")
            if position == 0 { ledger.timeReference(reference) }
        }
    }

    /// The open set's first frame's time: its origination time (the
    /// millisecond, as in names) and TimeReference (samples since that
    /// day's midnight in the take's zone; a cut half a frame before midnight
    /// belongs to the new day, at 0).
    private func stampOpenSet(_ utc: Double, sampleRate: Int) -> (named: Double, reference: UInt64) {
        let named = (utc * 1000).rounded() / 1000
        let midnight = named - settings.zone.secondsOfDay(at: named)
        let reference = UInt64(max(0, ((utc - midnight) * Double(sampleRate)).rounded()))
        setUTC = utc
        setOffset = settings.zone.offset(at: named)
        setReference = settings.format.container.carriesBroadcastExtension ? reference : nil
        return (named, reference)
    }
}
