import Foundation

/// A path's frequency response from a sweep played through it
/// (`SweepStimulus`): the recording's spectrum divided by the sweep's, in
/// the sweep's band. Pure: it sees only samples.
///
/// The impulse response (the band's transform back) has its peak where the
/// path's delay is; that whole number of frames is removed from the phase,
/// so the phase is the device's own. Magnitude in dB against the sweep (0 dB:
/// what went out came back), phase in degrees.
public struct SweepAnalysis: Sendable {
    /// The response at one frequency.
    public struct Point: Sendable, Equatable {
        public let frequency: Double
        public let magnitudeDB: Double
        public let phaseDegrees: Double
    }

    public let sampleRate: Int
    /// The path's delay, frames: where the impulse response peaks.
    public let delayFrames: Int
    /// The response on every bin of the band (the raw data, for `--frd`).
    public let bins: [Point]
    /// The impulse response, delay removed, full scale 1 (its first frame is the peak's).
    public let impulseResponse: [Float]

    /// The response at `frequencies` (Hz): each the nearest bin's.
    public func points(at frequencies: [Double]) -> [Point] {
        guard let first = bins.first, bins.count > 1 else { return [] }
        let spacing = bins[1].frequency - first.frequency
        return frequencies.compactMap { frequency in
            let index = Int(((frequency - first.frequency) / spacing).rounded())
            return bins.indices.contains(index) ? bins[index] : nil
        }
    }

    /// `perOctave` points an octave from the band's start to its end, Hz.
    public static func logFrequencies(from start: Double, to end: Double, perOctave: Int) -> [Double] {
        let count = Int((log2(end / start) * Double(perOctave)).rounded(.down))
        return (0...count).map { start * pow(2, Double($0) / Double(perOctave)) }
    }

    /// The response of the path that turned `played` (the sweep) into
    /// `recorded` (as long), in the sweep's band.
    public static func analyse(played: [Float], recorded: [Float], sweep: SweepStimulus) -> SweepAnalysis {
        let length = RealFFT.smoothLength(atLeast: played.count * 2)
        let fft = RealFFT(length: length)
        func padded(_ samples: [Float]) -> ArraySlice<Float> { (samples + [Float](repeating: 0, count: length - samples.count))[...] }
        let input = fft.transform(padded(played)), output = fft.transform(padded(recorded))
        let binWidth = Double(sweep.sampleRate) / Double(length)
        let band = Int((sweep.startFrequency / binWidth).rounded(.up))...Int((sweep.endFrequency / binWidth).rounded(.down))
        var response = [(re: Double, im: Double)](repeating: (0, 0), count: length / 2 + 1)
        for bin in band {
            let (a, b) = input[bin], (c, d) = output[bin]
            let power = a * a + b * b
            guard power > 0 else { continue }
            response[bin] = ((c * a + d * b) / power, (d * a - c * b) / power)
        }
        let impulse = fft.inverse(response)
        let peak = impulse.indices.max { abs(impulse[$0]) < abs(impulse[$1]) } ?? 0
        // A peak in the last half is a delay below zero's wrap: none here (a path never answers early).
        let delay = peak
        let points = band.map { bin -> Point in
            let (re, im) = response[bin]
            let frequency = Double(bin) * binWidth
            let phase = atan2(im, re) + 2 * Double.pi * frequency * Double(delay) / Double(sweep.sampleRate)
            return Point(frequency: frequency, magnitudeDB: 10 * log10(re * re + im * im),
                         phaseDegrees: HarmonicAnalysis.wrapped(phase * 180 / .pi))
        }
        let tail = min(impulse.count - delay, sweep.tailFrames)
        return SweepAnalysis(sampleRate: sweep.sampleRate, delayFrames: delay, bins: points,
                             impulseResponse: impulse[delay..<(delay + tail)].map { Float($0) })
    }
}
