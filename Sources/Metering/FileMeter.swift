import Recording

/// Meters a sound file through the same `ProgrammeMeter` as live ports, so
/// its figures can be compared with other tools on the same file.
public enum FileMeter {
    /// Meters the file at `path`, calling `onReading` every `interval` seconds
    /// of audio, and returns the summary. `layout` nil: by channel count.
    public static func meter(path: String, layout: ChannelLayout? = nil, interval: Double = 0.1,
                             vuReferenceDBFS: Double = -18, kScale: Int = 14,
                             onReading: (MeterReading) -> Void = { _ in }) throws(RecordingError) -> MeterSummary {
        let file = try SoundFileReader(path: path)
        if let layout, layout.channelCount != file.channels {
            throw .badParameter("--layout \(layout.rawValue) needs \(layout.channelCount) channels; '\(path)' has \(file.channels)")
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
        while true {
            let frames = buffer.withUnsafeMutableBufferPointer { file.read(into: $0.baseAddress!, frames: chunk) }
            guard frames > 0 else { break }
            buffer.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: frames) }
            if frames == chunk { onReading(meter.reading()) }
        }
        return meter.summary()
    }
}
