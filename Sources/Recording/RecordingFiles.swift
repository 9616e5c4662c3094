import Foundation
import SystemPackage

/// One set of a take's files, at one sample rate: one interleaved file, or
/// one per channel (`take_1.wav`, `take_2.wav`, ...). A rate change after a
/// server restart, or a rotation, starts a new set (see `TakeNaming`).
final class RecordingFiles {
    let sampleRate: Int
    let channels: Int
    let writers: [SoundFileWriter]
    private var scratch: [Float] = []
    private var silence: [Float] = []

    /// Opens the files at `paths` (one interleaved file, or one per channel),
    /// each metered for its loudness as it is written.
    init(paths: [String], channels: Int, sampleRate: Int, format: RecordingFormat,
         fifo: FileDescriptor? = nil) throws(RecordingError) {
        self.sampleRate = sampleRate
        self.channels = channels
        var writers: [SoundFileWriter] = []
        for path in paths {
            writers.append(try SoundFileWriter(path: path, fileDescriptor: fifo?.rawValue,
                                               channels: paths.count > 1 ? 1 : channels,
                                               sampleRate: sampleRate, format: format, measuresLoudness: true))
        }
        self.writers = writers
    }

    var paths: [String] { writers.map(\.path) }

    /// Writes `frames` interleaved frames.
    func write(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(RecordingError) {
        guard frames > 0, let base = samples.baseAddress else { return }
        if writers.count == 1 {
            try writers[0].write(base, frames: frames)
            return
        }
        if scratch.count < frames { scratch = [Float](repeating: 0, count: frames) }
        for (channel, writer) in writers.enumerated() {
            for frame in 0..<frames { scratch[frame] = base[frame * channels + channel] }
            let result = scratch.withUnsafeBufferPointer { buffer -> RecordingError? in
                do { try writer.write(buffer.baseAddress!, frames: frames) } catch let failure as RecordingError { return failure } catch { return .file(path: "", reason: "\(error)") }
                return nil
            }
            if let result { throw result }
        }
    }

    /// Writes `frames` frames of silence.
    func writeSilence(frames: Int) throws(RecordingError) {
        let chunk = 4096
        if silence.isEmpty { silence = [Float](repeating: 0, count: chunk * channels) }
        var left = frames
        while left > 0 {
            let count = min(left, chunk)
            let result = silence.withUnsafeBufferPointer { buffer -> RecordingError? in
                do { try write(buffer, frames: count) } catch let failure as RecordingError { return failure } catch { return .file(path: "", reason: "\(error)") }
                return nil
            }
            if let result { throw result }
            left -= count
        }
    }

    /// Frames every file of the set holds (per-channel files: the fewest).
    var framesWritten: Int64 { writers.map(\.framesWritten).min() ?? 0 }

    func setBroadcastExtension(timeReference: UInt64, origination utc: Double, zone: RecordingTimeZone,
                               description: String) {
        for writer in writers {
            writer.setBroadcastExtension(description: description, originator: "JackAudioSession jas record",
                                         origination: utc, zone: zone, timeReference: timeReference)
        }
    }

    /// The set's first frame's time, measured again: each file's `bext` gets it at close.
    func reviseOrigination(_ utc: Double, zone: RecordingTimeZone, timeReference: UInt64) {
        for writer in writers { writer.reviseOrigination(utc, zone: zone, timeReference: timeReference) }
    }

    func updateHeaders() { writers.forEach { $0.updateHeader() } }

    func close() { writers.forEach { $0.close() } }
}
