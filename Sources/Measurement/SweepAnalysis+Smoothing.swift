import Foundation

extension SweepAnalysis {
    /// The response at `frequencies` (Hz), its magnitude smoothed over 1/`fraction`
    /// of an octave centred on each (the power of the band's bins within
    /// f·2^(±1/(2·fraction)) averaged, as REW and Open Sound Meter smooth), for
    /// display: the raw bins stay as they are. The phase is the nearest bin's.
    public func smoothed(at frequencies: [Double], octaveFraction fraction: Int) -> [Point] {
        // The running sum of the bins' power, so that each point costs two look-ups.
        var sums = [0.0]
        sums.reserveCapacity(response.count + 1)
        for (re, im) in response { sums.append(sums[sums.count - 1] + re * re + im * im) }
        let halfWidth = pow(2, 1 / (2 * Double(fraction)))
        return frequencies.compactMap { frequency in
            guard let raw = points(at: [frequency]).first else { return nil }
            let (low, high) = smoothingBins(around: frequency, halfWidth: halfWidth)
            let power = (sums[high + 1] - sums[low]) / Double(high - low + 1)
            return Point(frequency: raw.frequency, magnitudeDB: 10 * log10(power), phaseDegrees: raw.phaseDegrees)
        }
    }

    /// The band's bins from f/`halfWidth` to f·`halfWidth` (at least the nearest one), as indices.
    func smoothingBins(around frequency: Double, halfWidth: Double) -> (low: Int, high: Int) {
        let nearest = min(max(Int(((frequency - firstFrequency) / binWidth).rounded()), 0), response.count - 1)
        let low = max(0, Int(((frequency / halfWidth - firstFrequency) / binWidth).rounded(.up)))
        let high = min(response.count - 1, Int(((frequency * halfWidth - firstFrequency) / binWidth).rounded(.down)))
        return (min(low, nearest), max(high, nearest))
    }
}
