import Foundation

/// A path's frequency response from a sweep played through it
/// (`SweepStimulus`): the recording's spectrum divided by the sweep's, in
/// the sweep's band. Pure: it sees only samples.
///
/// The impulse response (the band's transform back) has its peak where the
/// path's delay is; that whole number of frames is removed from the phase,
/// so the phase is the device's own. Magnitude in dB against the sweep (0 dB:
/// what went out came back), phase in degrees. The harmonics' responses come
/// ahead of the linear one by the synchronized sweep's known advances, each
/// cut out and transformed: for an exponential sweep a harmonic's spectrum
/// over the sweep's is its amplitude over the sweep's, so each harmonic's
/// level against the fundamental at f is its response at k·f less the
/// linear response at f. A digital device's harmonics that alias back
/// below half the sample rate come at other times than their order's, and
/// may fall into another order's window (at 48 kHz, a 3rd harmonic of
/// 10.7 kHz, aliased to 16 kHz, into the 2nd's of 8 kHz): above a quarter of
/// the sample rate a harmonic read from a sweep can hold another's alias,
/// which a stepped sine (`SteppedSine`) keeps apart.
public struct SweepAnalysis: Sendable {
    /// The response at one frequency.
    public struct Point: Sendable, Equatable {
        /// Hz.
        public let frequency: Double
        /// Against what was sent, dB.
        public let magnitudeDB: Double
        /// Degrees, the path's whole-frame delay removed.
        public let phaseDegrees: Double
    }

    /// The sample rate of the recording, Hz.
    public let sampleRate: Int
    /// The sweep's band, Hz.
    public let band: ClosedRange<Double>
    /// The path's delay, frames: where the impulse response peaks.
    public let delayFrames: Int
    /// The response on every bin of the band (the raw data): the first
    /// bin's frequency, the bins' spacing (Hz) and each bin's complex value.
    let firstFrequency: Double
    let binWidth: Double
    let response: [(re: Double, im: Double)]

    /// The response on every bin of the band.
    public var bins: [Point] { response.indices.map(point) }

    /// The response on bin `index` of the band, the delay removed from its phase.
    private func point(_ index: Int) -> Point {
        let (re, im) = response[index]
        let frequency = firstFrequency + Double(index) * binWidth
        let phase = atan2(im, re) + 2 * Double.pi * frequency * Double(delayFrames) / Double(sampleRate)
        return Point(frequency: frequency, magnitudeDB: 10 * log10(re * re + im * im),
                     phaseDegrees: HarmonicAnalysis.wrapped(phase * 180 / .pi))
    }
    /// The impulse response, full scale 1, the band's low edge eased in over
    /// its first octave: `impulseLeadFrames` before its peak (what a band
    /// limit or a linear-phase filter rings before it), then from the peak on.
    public let impulseResponse: [Float]
    /// Frames of `impulseResponse` before its peak: 10 ms.
    public var impulseLeadFrames: Int { Self.impulseLead(sampleRate) }
    static func impulseLead(_ sampleRate: Int) -> Int { sampleRate / 100 }
    /// Each harmonic's response (order 2 up), from its own impulse response,
    /// which comes `SweepStimulus.harmonicAdvance(order)` ahead of the linear
    /// one: magnitude against what was sent, by the harmonic's own frequency.
    public let harmonicResponses: [Int: HarmonicResponse]
    /// The same for a perfect path (this delay, nothing else): what the
    /// method itself puts in each harmonic's window, its floor.
    public let floorResponses: [Int: HarmonicResponse]

    /// A harmonic's magnitude response, dB, on bins `binWidth` apart from 0 Hz.
    public struct HarmonicResponse: Sendable {
        /// The bins' spacing, Hz.
        public let binWidth: Double
        /// Each bin's magnitude, dB.
        public let magnitudeDB: [Double]

        /// The magnitude at `frequency` (the nearest bin's), dB.
        public func magnitude(at frequency: Double) -> Double? {
            let bin = Int((frequency / binWidth).rounded())
            return magnitudeDB.indices.contains(bin) ? magnitudeDB[bin] : nil
        }
    }

    /// What one frequency's harmonic distortion was: each harmonic's level
    /// against the fundamental, and their root-sum-square (THD), dB. A
    /// harmonic is told only `floorMargin` dB or more above the method's own
    /// floor there; the floor (a perfect path's THD in the same windows) is told too.
    public struct Distortion: Sendable, Equatable {
        /// The fundamental, Hz.
        public let frequency: Double
        /// Order → level against the fundamental, dB (those above the floor's margin).
        public let harmonics: [Int: Double]
        /// THD of a perfect path measured the same way, dB.
        public let floorDB: Double
        /// The harmonics' root-sum-square, dB (nil: none above the floor's margin).
        public var thdDB: Double? {
            harmonics.isEmpty ? nil : 10 * log10(harmonics.values.reduce(0) { $0 + pow(10, $1 / 10) })
        }
    }

    /// What single-precision transforms leave in each harmonic's window, dB
    /// against the fundamental (KissFFT as Debian builds it rounds at about
    /// −150 dB a bin): part of every floor.
    public static let precisionFloorDB = -140.0

    /// How far above the method's floor a harmonic must be to be told, dB
    /// (the floor then moves it by less than 1 dB, whatever their phases).
    public static let floorMargin = 20.0

    /// How far above the sweep's start (a factor) harmonic distortion is
    /// told: below it the start's edge, where each harmonic's sweep begins,
    /// rings into the harmonics' windows (a polynomial's 2nd harmonic read
    /// 1.2 dB off at 2.5 times the start, within 0.05 dB from 5 times).
    public static let distortionFloorFactor = 5.0

    /// The harmonic distortion at `frequency` (the fundamental's, Hz): every
    /// harmonic whose frequency lies in the sweep's band; nil when none
    /// does, or `frequency` is under `distortionFloorFactor` times the start.
    public func distortion(at frequency: Double) -> Distortion? {
        guard frequency >= band.lowerBound * Self.distortionFloorFactor,
              let fundamental = points(at: [frequency]).first else { return nil }
        var levels: [Int: Double] = [:]
        var floorPower = 0.0
        var measured = false
        for (order, response) in harmonicResponses where Double(order) * frequency <= band.upperBound {
            guard let level = response.magnitude(at: Double(order) * frequency) else { continue }
            measured = true
            let method = floorResponses[order]?.magnitude(at: Double(order) * frequency) ?? -.infinity
            let floor = 10 * log10(pow(10, method / 10) + pow(10, Self.precisionFloorDB / 10))
            floorPower += pow(10, floor / 10)
            if level - fundamental.magnitudeDB >= floor + Self.floorMargin { levels[order] = level - fundamental.magnitudeDB }
        }
        return measured ? Distortion(frequency: fundamental.frequency, harmonics: levels, floorDB: 10 * log10(floorPower)) : nil
    }

    /// The response at `frequencies` (Hz): each the nearest bin's.
    public func points(at frequencies: [Double]) -> [Point] {
        frequencies.compactMap { frequency in
            let index = Int(((frequency - firstFrequency) / binWidth).rounded())
            return response.indices.contains(index) ? point(index) : nil
        }
    }

    /// `perOctave` points an octave from the band's start to its end, Hz.
    public static func logFrequencies(from start: Double, to end: Double, perOctave: Int) -> [Double] {
        let count = Int((log2(end / start) * Double(perOctave)).rounded(.down))
        return (0...count).map { start * pow(2, Double($0) / Double(perOctave)) }
    }

    /// The response of the path that turned `played` (the sweep) into
    /// `recorded` (as long), in the sweep's band.
    /// What an analysis needs of the sweep alone, made once for all the
    /// channels that recorded it: the transforms (a long plan's twiddles are
    /// a good part of the work), the sweep's spectrum, and the method's floor
    /// (what a perfect path shows in the harmonics' windows).
    public final class SweepReference {
        let sweep: SweepStimulus
        let highestOrder: Int
        let whole: RealFFT
        let window: RealFFT
        let binWidth: Double
        let band: ClosedRange<Int>
        /// The played sweep's spectrum.
        let input: [(re: Double, im: Double)]
        let floorResponses: [Int: HarmonicResponse]

        /// What analyses of `played` (the samples of `sweep`) need, harmonics up to `highestOrder`.
        public init(sweep: SweepStimulus, played: [Float], highestOrder: Int = 9) {
            self.sweep = sweep
            self.highestOrder = highestOrder
            whole = RealFFT(length: RealFFT.smoothLength(atLeast: sweep.length * 2))
            let rate = Double(sweep.sampleRate)
            let room = SweepAnalysis.room(2, sweep: sweep, rate: rate)
            window = RealFFT(length: RealFFT.smoothLength(atLeast: room.before + room.after))
            binWidth = rate / Double(whole.length)
            band = Int((sweep.startFrequency / binWidth).rounded(.up))...Int((sweep.endFrequency / binWidth).rounded(.down))
            input = whole.transform(SweepAnalysis.padded(played, to: whole.length))
            var perfect = [(re: Double, im: Double)](repeating: (0, 0), count: whole.length / 2 + 1)
            for bin in band { perfect[bin] = (1, 0) }
            if highestOrder >= 2 {
                let impulse = SweepAnalysis.easedImpulse(of: perfect, fft: whole, binWidth: binWidth, band: band, sweep: sweep)
                floorResponses = SweepAnalysis.harmonics(of: impulse, windowFFT: window, delay: 0, sweep: sweep,
                                                         highestOrder: highestOrder)
            } else {
                floorResponses = [:]
            }
        }
    }

    static func padded(_ samples: [Float], to length: Int) -> ArraySlice<Float> {
        var padded = samples
        padded.append(contentsOf: repeatElement(0, count: length - samples.count))
        return padded[...]
    }

    /// The room each harmonic's window has, frames: to the next response
    /// before it (order + 1's) and most of the way to the one after it (order − 1's).
    static func room(_ order: Int, sweep: SweepStimulus, rate: Double) -> (before: Int, after: Int) {
        let advance = sweep.harmonicAdvance(order) * rate
        return (Int(min(0.2 * (sweep.harmonicAdvance(order + 1) * rate - advance), 0.005 * rate)),
                Int(0.5 * (advance - sweep.harmonicAdvance(order - 1) * rate)))
    }

    /// The response of the path that turned `played` (the sweep) into
    /// `recorded` (as long), in the sweep's band.
    public static func analyse(played: [Float], recorded: [Float], sweep: SweepStimulus, highestOrder: Int = 9) -> SweepAnalysis {
        analyse(recorded: recorded, reference: SweepReference(sweep: sweep, played: played, highestOrder: highestOrder))
    }

    /// The response of the path whose recording of the reference's sweep is `recorded`.
    public static func analyse(recorded: [Float], reference: SweepReference) -> SweepAnalysis {
        let (fft, band, binWidth, sweep) = (reference.whole, reference.band, reference.binWidth, reference.sweep)
        let output = fft.transform(padded(recorded, to: fft.length))
        var response = [(re: Double, im: Double)](repeating: (0, 0), count: fft.length / 2 + 1)
        for bin in band {
            let (a, b) = reference.input[bin], (c, d) = output[bin]
            let power = a * a + b * b
            guard power > 0 else { continue }
            response[bin] = ((c * a + d * b) / power, (d * a - c * b) / power)
        }
        let impulse = easedImpulse(of: response, fft: fft, binWidth: binWidth, band: band, sweep: sweep)
        // The peak is where the path's delay is (a path never answers early, so no wrap below zero).
        let delay = impulse.indices.max { abs(impulse[$0]) < abs(impulse[$1]) } ?? 0
        let tail = min(impulse.count - delay, sweep.tailFrames)
        return SweepAnalysis(sampleRate: sweep.sampleRate, band: sweep.startFrequency...sweep.endFrequency,
                             delayFrames: delay, firstFrequency: Double(band.lowerBound) * binWidth, binWidth: binWidth,
                             response: Array(response[band]),
                             impulseResponse: (delay - impulseLead(sweep.sampleRate)..<(delay + tail)).map { index in
                                 // Before the peak, circularly: what comes before frame 0 is at the end.
                                 Float(impulse[(index + impulse.count) % impulse.count])
                             },
                             harmonicResponses: harmonics(of: impulse, windowFFT: reference.window, delay: delay, sweep: sweep,
                                                          highestOrder: reference.highestOrder),
                             floorResponses: reference.floorResponses)
    }

    /// The harmonics' responses: each harmonic's impulse response cut out of
    /// the (circular) whole, from a little before its start to most of the
    /// way to the next one's, and transformed.
    /// The impulse response of `response`, its band's low edge eased in over
    /// an octave: a sharp edge at the sweep's start rings at that frequency
    /// for seconds, across the harmonics' windows, 40 dB above a 1 %
    /// harmonic. The harmonics are read from five times the start up
    /// (`distortionFloorFactor`), where the easing is over.
    static func easedImpulse(of response: [(re: Double, im: Double)], fft: RealFFT, binWidth: Double, band: ClosedRange<Int>,
                             sweep: SweepStimulus) -> [Double] {
        var eased = response
        let easeEnd = Int((sweep.startFrequency * 2 / binWidth).rounded(.up))
        for bin in band.lowerBound..<min(easeEnd, band.upperBound) {
            let gain = 0.5 - 0.5 * cos(Double.pi * log2(Double(bin) * binWidth / sweep.startFrequency))
            eased[bin] = (response[bin].re * gain, response[bin].im * gain)
        }
        return fft.inverse(eased)
    }

    /// Each harmonic's response, cut out of `impulse` (eased) at its advance before `delay`.
    static func harmonics(of impulse: [Double], windowFFT: RealFFT, delay: Int, sweep: SweepStimulus,
                          highestOrder: Int) -> [Int: HarmonicResponse] {
        guard highestOrder >= 2 else { return [:] }
        let rate = Double(sweep.sampleRate)
        var responses: [Int: HarmonicResponse] = [:]
        // One transform for every window: the 2nd harmonic's is the longest.
        let length = windowFFT.length
        for order in 2...highestOrder {
            let advance = sweep.harmonicAdvance(order) * rate
            let (before, after) = room(order, sweep: sweep, rate: rate)
            guard after > 16 else { break }
            let start = delay - Int(advance.rounded())
            var window = [Float](repeating: 0, count: length)
            for offset in -before..<after {
                // From the response's start on, then the part before it at the end (circularly), so its phase is its own.
                let index = ((start + offset) % impulse.count + impulse.count) % impulse.count
                let fade = offset < 0 ? 0.5 - 0.5 * cos(Double.pi * Double(offset + before) / Double(max(before, 1)))
                    : offset > after * 3 / 4 ? 0.5 + 0.5 * cos(Double.pi * Double(offset - after * 3 / 4) / Double(after / 4)) : 1
                window[(offset + length) % length] = Float(impulse[index] * fade)
            }
            let spectrum = windowFFT.transform(window[...])
            responses[order] = HarmonicResponse(binWidth: rate / Double(length),
                                                magnitudeDB: spectrum.map { 10 * log10($0.re * $0.re + $0.im * $0.im) })
        }
        return responses
    }
}
