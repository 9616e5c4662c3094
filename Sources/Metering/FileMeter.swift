import SoundFile

/// Meters a sound file through the same `ProgrammeMeter` as live ports, so
/// its figures can be compared with other tools on the same file.
public enum FileMeter {
    /// Meters the file at `path`, calling `onReading` every `interval` seconds
    /// of audio, and returns the summary. `layout` nil: by channel count.
    /// `onWarning` hears what makes the figures less than the whole truth: a
    /// file shorter than its header says, samples that are not numbers.
    public static func meter(path: String, layout: ChannelLayout? = nil, interval: Double = 0.1,
                             vuReferenceDBFS: Double = -18, kScale: Int = 14,
                             onReading: (MeterReading) -> Void = { _ in },
                             onWarning: (String) -> Void = { _ in }) throws(MeteringError) -> MeterSummary {
        let file: SoundFileReader
        do {
            file = try SoundFileReader(path: path)
        } catch {
            throw .file(error)
        }
        if let layout, layout.channelCount != file.channels {
            throw .layoutMismatch(layout: layout, channels: file.channels, source: "'\(path)'")
        }
        var configuration = ProgrammeMeter.Configuration(
            channels: file.channels, sampleRate: file.sampleRate,
            layout: layout ?? ChannelLayout.standard(forChannels: file.channels),
            sources: (1...max(1, file.channels)).map { "\(path) channel \($0)" })
        configuration.vuReferenceDBFS = vuReferenceDBFS
        configuration.kScale = kScale
        let meter = try ProgrammeMeter(configuration: configuration)
        let chunk = max(1, Int(interval * Double(file.sampleRate)))
        var buffer = [Float](repeating: 0, count: chunk * file.channels)
        var framesRead: Int64 = 0
        var nonFinite = NonFiniteSamples()
        while true {
            let frames = buffer.withUnsafeMutableBufferPointer { file.read(into: $0.baseAddress!, frames: chunk) }
            guard frames > 0 else { break }
            nonFinite.silence(&buffer, count: frames * file.channels, channels: file.channels, firstFrame: framesRead)
            framesRead += Int64(frames)
            buffer.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: frames) }
            if frames == chunk { onReading(meter.reading()) }
        }
        if let first = nonFinite.firstFrame {
            onWarning("'\(path)': \(nonFinite.count) samples are NaN or infinite (the first at frame \(first)); they were "
                      + "metered as silence, so every figure covers only the rest: the file is damaged or was written by "
                      + "a faulty program")
        }
        if let truncation = file.truncation {
            onWarning("'\(path)' is truncated: \(truncation); the meters cover the \(framesRead) frames that are there "
                      + "(a recording that did not finish, or a copy cut short)")
        }
        return meter.summary()
    }
}

/// Samples that are not numbers (NaN, ±infinity) in a file being metered:
/// counted, and replaced by silence so that one of them does not turn every
/// figure into "no reading".
struct NonFiniteSamples {
    private(set) var count = 0
    private(set) var firstFrame: Int64?

    mutating func silence(_ samples: inout [Float], count total: Int, channels: Int, firstFrame start: Int64) {
        for index in 0..<total where !samples[index].isFinite {
            samples[index] = 0
            count += 1
            if firstFrame == nil { firstFrame = start + Int64(index / max(1, channels)) }
        }
    }
}
