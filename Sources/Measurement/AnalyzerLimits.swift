import Foundation
import Yams

/// Tolerances for the analyzer's figures, as a production line writes them
/// in a YAML file: for each measurement, each figure's lowest and highest
/// allowed value.
///
/// ```yaml
/// thd:                     # jas analyze thd (997 Hz, -1 dBFS unless asked otherwise)
///   gain_db: {min: -0.1, max: 0.1}
///   thd_n_db: {max: -90}
/// response:                # the sweep's band, against the level at 997 Hz
///   deviation_db: {max: 0.5}
/// noise:
///   dynamic_range_a_db: {min: 96}
/// imd:
///   smpte_db: {max: -80}
/// thd_vs_level:            # jas analyze thd --up-to: where THD+N reaches 1 %
///   max_level_dbfs: {min: -3}
/// ```
///
/// A name that is not a measurement or one of its figures, or a bound with
/// neither `min` nor `max`, is refused with the name and the ones there are:
/// a misspelt limit never passes in silence.
public struct AnalyzerLimits: Sendable, Equatable {
    /// The lowest and highest allowed value of a figure (either may be absent).
    public struct Bound: Sendable, Equatable, Decodable {
        /// The lowest allowed value (nil: none).
        public let min: Double?
        /// The highest allowed value (nil: none).
        public let max: Double?

        /// A bound from `min` to `max` (either may be nil).
        public init(min: Double?, max: Double?) {
            self.min = min
            self.max = max
        }

        /// Whether `value` lies within. A figure of digital silence (−∞ dBFS,
        /// an infinite ratio) compares as the infinity it is; NaN never passes.
        public func admits(_ value: Double) -> Bool {
            guard !value.isNaN else { return false }
            return value >= (min ?? -.infinity) && value <= (max ?? .infinity)
        }
    }

    /// For each measurement (`thd`, `noise`, `imd`), each figure's bound.
    public let bounds: [String: [String: Bound]]
    /// Where the limits came from (a path), for messages.
    public let source: String

    /// Why a limits file cannot be used.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The figures each measurement gives, by measurement.
    public static let figures: [String: [String]] = [
        "response": ["gain_997_db", "deviation_db"],
        "thd": ["gain_db", "phase_deg", "thd_db", "thd_n_db"],
        "thd_vs_level": ["max_level_dbfs"],
        "noise": ["noise_dbfs", "noise_a_dbfs", "noise_c_dbfs", "noise_ccir_rms_dbfs", "noise_itu468_qp_dbfs", "snr_db", "dynamic_range_a_db",
                  "dynamic_range_ccir_rms_db"],
        "imd": ["smpte_db", "din_db", "ccif_db"],
        "crosstalk": ["crosstalk_db", "crosstalk_max_db", "gain_match_db", "phase_match_deg"],
    ]

    /// The limits in `yaml`, from `source`.
    public init(yaml: String, source: String) throws(Problem) {
        let decoded: [String: [String: Bound]]
        do {
            decoded = try YAMLDecoder().decode([String: [String: Bound]].self, from: yaml)
        } catch {
            throw Problem(description: "\(source): not a limits file (\(error)); each measurement (response, thd, thd_vs_level, noise, imd, crosstalk) maps "
                          + "figures to {min: X, max: Y}, e.g. 'thd:\\n  thd_n_db: {max: -90}'")
        }
        for (measurement, figures) in decoded {
            guard let known = Self.figures[measurement] else {
                throw Problem(description: "\(source): '\(measurement)' is not a measurement; use "
                              + Self.figures.keys.sorted().joined(separator: ", "))
            }
            for (figure, bound) in figures {
                guard known.contains(figure) else {
                    throw Problem(description: "\(source): '\(figure)' is not a figure of \(measurement); its figures: "
                                  + known.joined(separator: ", "))
                }
                guard bound.min != nil || bound.max != nil else {
                    throw Problem(description: "\(source): \(measurement).\(figure) has neither min nor max")
                }
                if let min = bound.min, let max = bound.max, min > max {
                    throw Problem(description: "\(source): \(measurement).\(figure) has min \(min) above max \(max)")
                }
            }
        }
        guard !decoded.isEmpty else { throw Problem(description: "\(source): no limits in it") }
        bounds = decoded
        self.source = source
    }

    /// The limits in the file at `path`.
    public init(contentsOf path: String) throws(Problem) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw Problem(description: "cannot read the limits file '\(path)': \(error.localizedDescription)")
        }
        try self.init(yaml: text, source: path)
    }
}
