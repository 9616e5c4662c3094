import Foundation
import XCTest

/// Fractional-octave bands of a white noise, as the analyzer's JSON gives
/// them (`low_hz`, `high_hz`, `level_dbfs`) from a one-second block (1 Hz
/// bins), against the closed form: a bin of white noise of variance σ²
/// holds 4σ²/N of a full-scale sine's power (N: the block's samples).
struct WhiteNoiseBands {
    /// Each band's level and its closed form, dBFS.
    let bands: [(low: Double, level: Double, expected: Double)]
    /// The bands' power summed, measured and in closed form, dBFS.
    let total: (measured: Double, expected: Double)

    init(_ json: [[String: Any]], variance: Double, sampleRate: Int = 48000,
         file: StaticString = #filePath, line: UInt = #line) throws {
        let perBin = 4 * variance / Double(sampleRate)
        var (measured, expected) = (0.0, 0.0)
        var bands: [(low: Double, level: Double, expected: Double)] = []
        for band in json {
            let low = try XCTUnwrap(band["low_hz"] as? Double, file: file, line: line)
            let high = try XCTUnwrap(band["high_hz"] as? Double, file: file, line: line)
            let level = try XCTUnwrap(band["level_dbfs"] as? Double, "\(band)", file: file, line: line)
            let bins = Double(Int(high.rounded(.down)) - Int(low.rounded(.up)) + 1)
            bands.append((low, level, 10 * log10(bins * perBin)))
            measured += pow(10, level / 10)
            expected += bins * perBin
        }
        self.bands = bands
        total = (10 * log10(measured), 10 * log10(expected))
    }
}
