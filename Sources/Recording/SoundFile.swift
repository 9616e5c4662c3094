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

    /// Creates (truncates) `path`, or writes to the open descriptor `fileDescriptor`
    /// when given (a FIFO: FLAC only; the writer closes it).
    public init(path: String, fileDescriptor: Int32? = nil, channels: Int, sampleRate: Int,
                format: RecordingFormat) throws(RecordingError) {
        self.path = path
        self.channels = channels
        self.sampleRate = sampleRate
        self.format = format
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

    /// Sets the Broadcast WAV `bext` chunk (WAV and RF64 only; before the first frame).
    /// `timeReference` is the first frame's position in samples since midnight.
    public func setBroadcastExtension(description: String, originator: String, originationDate: Date,
                                      timeReference: UInt64) {
        guard let handle, format.container.carriesBroadcastExtension, !wroteAudio else { return }
        var info = SF_BROADCAST_INFO()
        func fill<T>(_ field: inout T, _ text: String) {
            withUnsafeMutableBytes(of: &field) { bytes in
                let utf8 = Array(text.utf8.prefix(bytes.count))
                bytes.copyBytes(from: utf8)
            }
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        fill(&info.description, description)
        fill(&info.originator, originator)
        fill(&info.origination_date, formatter.string(from: originationDate))
        formatter.dateFormat = "HH:mm:ss"
        fill(&info.origination_time, formatter.string(from: originationDate))
        info.time_reference_low = UInt32(truncatingIfNeeded: timeReference)
        info.time_reference_high = UInt32(truncatingIfNeeded: timeReference >> 32)
        info.version = 1
        sf_command(handle, Int32(SFC_SET_BROADCAST_INFO), &info, Int32(MemoryLayout<SF_BROADCAST_INFO>.size))
    }

    /// Writes `frames` interleaved frames from `samples`.
    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws(RecordingError) {
        guard let handle else { throw .file(path: path, reason: "the file is closed") }
        guard frames > 0 else { return }
        wroteAudio = true
        let written = sf_writef_float(handle, samples, sf_count_t(frames))
        framesWritten += Int64(max(0, written))
        if written != frames {
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

    /// Finalises the header and closes the file.
    public func close() {
        guard let handle else { return }
        sf_close(handle)
        self.handle = nil
    }
}

/// A sound file read through libsndfile as interleaved floats.
public final class SoundFileReader {
    public let path: String
    public let channels: Int
    public let sampleRate: Int
    /// Frames in the file, as its header says (a streamed FLAC's says nothing: `Int64.max`).
    public let frames: Int64
    private var handle: OpaquePointer?

    /// Opens `path` for reading.
    public init(path: String) throws(RecordingError) {
        self.path = path
        var info = SF_INFO()
        guard let opened = sf_open(path, Int32(SFM_READ), &info) else {
            throw .file(path: path, reason: Self.whyUnreadable(path, library: String(cString: sf_strerror(nil))))
        }
        handle = opened
        channels = Int(info.channels)
        sampleRate = Int(info.samplerate)
        frames = Int64(info.frames)
    }

    deinit {
        if let handle { sf_close(handle) }
    }

    /// Reads up to `frames` frames into `buffer` (room for frames × channels);
    /// returns how many were read (0 at the end).
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        guard let handle else { return 0 }
        return Int(sf_readf_float(handle, buffer, sf_count_t(frames)))
    }

    /// Reads the rest of the file, interleaved, in chunks until its end (a
    /// streamed FLAC's header gives no length).
    public func readAll() -> [Float] {
        var samples: [Float] = []
        var chunk = [Float](repeating: 0, count: 65536 * channels)
        while true {
            let got = chunk.withUnsafeMutableBufferPointer { read(into: $0.baseAddress!, frames: 65536) }
            guard got > 0 else { break }
            samples += chunk[0..<(got * channels)]
        }
        return samples
    }

    /// Why a file cannot be opened, in words that say what to do
    /// (libsndfile's own text alone, "Format not recognised.", does not).
    static func whyUnreadable(_ path: String, library: String) -> String {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return "cannot be opened (\(String(cString: strerror(errno)))); check the path"
        }
        if status.st_mode & S_IFMT == S_IFDIR { return "is a folder, not a sound file; name a file in it" }
        if access(path, R_OK) != 0 { return "cannot be read (\(String(cString: strerror(errno)))); check its permissions" }
        if status.st_size == 0 { return "is empty (0 bytes): there is no audio in it" }
        return "is not audio that libsndfile can read (\(library)); give a WAV, FLAC, AIFF or another format it "
            + "reads, or convert the file first (e.g. `sox IN OUT.wav`)"
    }

    /// What libsndfile noticed about a file shorter than its header says (a
    /// recording that did not finish, a copy cut short), or nil. It reads the
    /// audio that is there and says so only in its log: "data : 576000
    /// (should be 199920)", bytes the header promises and bytes there are.
    public var truncation: String? {
        guard let handle else { return nil }
        var log = [CChar](repeating: 0, count: 16384)
        sf_command(handle, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count))
        let text = String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for line in text.split(separator: "\n") {
            let words = line.split(whereSeparator: { " :()".contains($0) })
            guard words.count == 5, ["data", "SSND"].contains(words[0]), words[2] == "should", words[3] == "be",
                  let promised = Int64(words[1]), let present = Int64(words[4]), present < promised,
                  // A streamed WAV's header says "as long as there is": not a promise.
                  promised < 0x7FFF_0000 else { continue }
            return "its header promises \(promised) bytes of audio and the file holds \(present)"
        }
        return nil
    }

    /// The Broadcast WAV time reference (samples since midnight), if the file has a `bext` chunk.
    public var broadcastTimeReference: UInt64? {
        guard let handle else { return nil }
        var info = SF_BROADCAST_INFO()
        guard sf_command(handle, Int32(SFC_GET_BROADCAST_INFO), &info, Int32(MemoryLayout<SF_BROADCAST_INFO>.size)) == SF_TRUE
        else { return nil }
        return UInt64(info.time_reference_high) << 32 | UInt64(info.time_reference_low)
    }
}
