import CSndFile
import Foundation

/// A sound file open for writing through libsndfile: interleaved float frames
/// in, converted (and clipped) to the file's sample format. Not thread-safe:
/// one writer thread.
public final class SoundFileWriter {
    /// Where the file is.
    public let path: String
    /// Channels per frame.
    public let channels: Int
    /// Frames per second.
    public let sampleRate: Int
    /// The container and sample format.
    public let format: RecordingFormat
    /// Frames written so far.
    public private(set) var framesWritten: Int64 = 0
    private var handle: OpaquePointer?
    private var wroteAudio = false
    private var hasBroadcastExtension = false
    private var revisedOrigination: (utc: Double, zone: RecordingTimeZone, timeReference: UInt64)?
    /// Meters what is written, for the file's loudness (`measuresLoudness`).
    private let loudnessMeter: FileLoudnessMeter?
    /// The file's loudness, once it is closed (nil: not measured).
    public private(set) var loudness: FileLoudness?

    /// Creates (truncates) `path`, or writes to the open descriptor `fileDescriptor`
    /// when given (a FIFO: FLAC only; the writer closes it). With
    /// `measuresLoudness`, what is written is metered (EBU R128, true peak),
    /// and at close the figures go in the file's `bext` (WAV, RF64) and `loudness`.
    public init(path: String, fileDescriptor: Int32? = nil, channels: Int, sampleRate: Int,
                format: RecordingFormat, measuresLoudness: Bool = false) throws(RecordingError) {
        self.path = path
        self.channels = channels
        self.sampleRate = sampleRate
        self.format = format
        loudnessMeter = measuresLoudness ? FileLoudnessMeter(channels: channels, sampleRate: sampleRate) : nil
        var info = SF_INFO(frames: 0, samplerate: Int32(sampleRate), channels: Int32(channels),
                           format: format.libsndfileFormat, sections: 0, seekable: 0)
        let opened = if let fileDescriptor {
            sf_open_fd(fileDescriptor, Int32(SFM_WRITE), &info, 1)
        } else {
            sf_open(path, Int32(SFM_WRITE), &info)
        }
        guard let opened else {
            let reason = String(cString: sf_strerror(nil))
            if reason.localizedCaseInsensitiveContains("permission") || reason.localizedCaseInsensitiveContains("no such") {
                throw .unwritablePath(path: path, reason: reason)
            }
            throw .file(path: path, reason: reason)
        }
        handle = opened
        // Out-of-range floats are clipped, not wrapped, in integer formats.
        sf_command(opened, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        if format.container == .rf64 {
            // Small RF64 recordings are written as plain WAV, as EBU Tech 3306 allows.
            sf_command(opened, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE))
        }
    }

    deinit { close() }

    /// The value EBU Tech 3285 (version 2) gives a loudness field that was not calculated.
    public static let loudnessNotCalculated: Int16 = 0x7FFF

    /// Sets the Broadcast WAV `bext` chunk (WAV and RF64 only; before the first frame).
    /// `timeReference` is the first frame's position in samples since
    /// midnight; the origination date and time are `origination` in `zone`.
    public func setBroadcastExtension(description: String, originator: String, origination utc: Double,
                                      zone: RecordingTimeZone, timeReference: UInt64) {
        guard let handle, format.container.carriesBroadcastExtension, !wroteAudio else { return }
        var info = SF_BROADCAST_INFO()
        func fill<T>(_ field: inout T, _ text: String) {
            withUnsafeMutableBytes(of: &field) { bytes in
                let utf8 = Array(text.utf8.prefix(bytes.count))
                bytes.copyBytes(from: utf8)
            }
        }
        fill(&info.description, description)
        fill(&info.originator, originator)
        fill(&info.origination_date, zone.format("%Y-%m-%d", at: utc))
        fill(&info.origination_time, zone.format("%H:%M:%S", at: utc))
        info.time_reference_low = UInt32(truncatingIfNeeded: timeReference)
        info.time_reference_high = UInt32(truncatingIfNeeded: timeReference >> 32)
        // libsndfile writes version 2 whatever is asked, and version 2 has
        // EBU Tech 3285's five loudness fields: until they are measured (at
        // close) they hold its "not calculated" value, never a 0 that reads as 0.00 LUFS.
        info.version = 2
        info.loudness_value = Self.loudnessNotCalculated
        info.loudness_range = Self.loudnessNotCalculated
        info.max_true_peak_level = Self.loudnessNotCalculated
        info.max_momentary_loudness = Self.loudnessNotCalculated
        info.max_shortterm_loudness = Self.loudnessNotCalculated
        hasBroadcastExtension = sf_command(handle, Int32(SFC_SET_BROADCAST_INFO), &info,
                                           Int32(MemoryLayout<SF_BROADCAST_INFO>.size)) == Int32(SF_TRUE)
    }

    /// Writes `frames` interleaved frames from `samples`.
    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws(RecordingError) {
        guard let handle else { throw .file(path: path, reason: "the file is closed") }
        guard frames > 0 else { return }
        wroteAudio = true
        errno = 0
        let written = sf_writef_float(handle, samples, sf_count_t(frames))
        let cause = errno
        framesWritten += Int64(max(0, written))
        loudnessMeter?.add(samples, frames: Int(max(0, written)))
        if written != frames {
            if cause == ENOSPC || cause == EDQUOT { throw .diskFull(path: path) }
            throw .file(path: path, reason: "write failed after \(framesWritten) frames: "
                        + String(cString: sf_strerror(handle)))
        }
    }

    /// Rewrites the header so that it counts every frame written: a reader
    /// opening the file after a crash finds all of them.
    public func updateHeader() {
        guard let handle else { return }
        sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    }

    /// Finalises the header and closes the file; a metered file's loudness
    /// then goes in its `bext` chunk and `loudness`.
    public func close() {
        guard let handle else { return }
        sf_close(handle)
        self.handle = nil
        if hasBroadcastExtension, let (utc, zone, reference) = revisedOrigination {
            BroadcastExtensionPatch.writeOrigination(utc, zone: zone, timeReference: reference, toFileAt: path)
        }
        guard let loudnessMeter else { return }
        let measured = loudnessMeter.loudness
        loudness = measured
        if hasBroadcastExtension { BroadcastExtensionPatch.write(measured, toFileAt: path) }
    }

    /// The first frame's time, measured again after frames were written
    /// (`FrameClock.isSettled`): it replaces the `bext` origination and
    /// TimeReference when the file is closed.
    public func reviseOrigination(_ utc: Double, zone: RecordingTimeZone, timeReference: UInt64) {
        revisedOrigination = (utc, zone, timeReference)
    }
}
