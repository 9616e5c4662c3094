import CSndFile
import Foundation

/// A sound file read through libsndfile as interleaved floats: the file
/// meter's input, and how tests and benchmarks read back what was recorded.
public final class SoundFileReader {
    public let path: String
    public let channels: Int
    public let sampleRate: Int
    /// Frames in the file, as its header says (a streamed FLAC's says nothing: `Int64.max`).
    public let frames: Int64
    private var handle: OpaquePointer?

    /// Opens `path` for reading.
    public init(path: String) throws(SoundFileError) {
        self.path = path
        var info = SF_INFO()
        guard let opened = sf_open(path, Int32(SFM_READ), &info) else {
            throw SoundFileError(path: path, reason: Self.whyUnreadable(path, library: String(cString: sf_strerror(nil))))
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

    /// Moves to frame `frame` from the start; false if the file cannot seek there.
    public func seek(toFrame frame: Int64) -> Bool {
        guard let handle else { return false }
        return sf_seek(handle, sf_count_t(frame), SEEK_SET) == frame
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
