/// A production line's answer: every limited figure of every channel
/// against its bound (`AnalyzerLimits`), and whether all passed.
public struct AnalyzerVerdict: Sendable, Equatable {
    /// One figure of one channel against its bound.
    public struct Row: Sendable, Equatable {
        /// The measurement (`response`, `thd`, `noise`, `imd`, `crosstalk`).
        public let measurement: String
        /// The channel's output port.
        public let outputPort: String
        /// The channel's input port.
        public let inputPort: String
        /// The figure's name, as the limits file has it.
        public let figure: String
        /// The figure measured (±∞ for digital silence).
        public let value: Double
        /// The bound it was held to.
        public let bound: AnalyzerLimits.Bound
        /// Whether the figure lies within its bound.
        public var passed: Bool { bound.admits(value) }
    }

    /// Every limited figure of every channel.
    public let rows: [Row]
    /// Where the limits came from.
    public let source: String
    /// Whether every figure lies within its bound.
    public var passed: Bool { rows.allSatisfy(\.passed) }

    /// A verdict of `rows`, on the limits from `source`.
    public init(rows: [Row], source: String) {
        self.rows = rows
        self.source = source
    }

    /// The rows of `limits` for the figures of one measurement's channels.
    public static func rows(_ limits: AnalyzerLimits, measurement: String,
                            channels: [(outputPort: String, inputPort: String, figures: [String: Double])]) -> [Row] {
        guard let bounds = limits.bounds[measurement] else { return [] }
        return channels.flatMap { channel in
            bounds.keys.sorted().map { figure in
                Row(measurement: measurement, outputPort: channel.outputPort, inputPort: channel.inputPort, figure: figure,
                    value: channel.figures[figure] ?? .nan, bound: bounds[figure]!)
            }
        }
    }
}

/// The figures a result gives a verdict, by the names `AnalyzerLimits` uses.
public protocol LimitedResult {
    /// `thd`, `noise`, `imd`.
    static var measurementName: String { get }
    /// Each channel's ports and figures.
    var limitedFigures: [(outputPort: String, inputPort: String, figures: [String: Double])] { get }
}

extension SweepMeasurement.Result: LimitedResult {
    public static let measurementName = "response"
    /// The gain at 997 Hz, and the largest distance from it over the
    /// sweep's band (at the 1/24-octave points), dB.
    public var limitedFigures: [(outputPort: String, inputPort: String, figures: [String: Double])] {
        let frequencies = SweepAnalysis.logFrequencies(from: sweep.startFrequency, to: sweep.endFrequency,
                                                       perOctave: Self.pointsPerOctave)
        return channels.map { channel in
            let reference = channel.analysis.points(at: [997]).first?.magnitudeDB ?? .nan
            let deviation = channel.analysis.points(at: frequencies).map { abs($0.magnitudeDB - reference) }.max() ?? .nan
            return (channel.outputPort, channel.inputPort, ["gain_997_db": reference, "deviation_db": deviation])
        }
    }
}

extension SteppedSine.Result: LimitedResult {
    public static let measurementName = "thd"
    public var limitedFigures: [(outputPort: String, inputPort: String, figures: [String: Double])] {
        channels.map { channel in
            (channel.outputPort, channel.inputPort, ["gain_db": channel.gainDB, "phase_deg": channel.analysis.phaseDegrees,
                                                     "thd_db": channel.analysis.thdDB, "thd_n_db": channel.analysis.thdPlusNoiseDB])
        }
    }
}

extension LevelStaircase.Result: LimitedResult {
    public static let measurementName = "thd_vs_level"
    /// The maximum level; one the staircase did not find is not measured (NaN), and fails.
    public var limitedFigures: [(outputPort: String, inputPort: String, figures: [String: Double])] {
        channels.map { ($0.outputPort, $0.inputPort, ["max_level_dbfs": $0.maximumLevel.dBFS ?? .nan]) }
    }
}

extension NoiseMeasurement.Result: LimitedResult {
    public static let measurementName = "noise"
    public var limitedFigures: [(outputPort: String, inputPort: String, figures: [String: Double])] {
        channels.map { channel in
            var figures = ["snr_db": channel.signalToNoiseDB, "noise_\(NoiseMeasurement.quasiPeak468Key)_dbfs": channel.quasiPeak468DBFS]
            for weighting in Weighting.allCases {
                figures[weighting == .unweighted ? "noise_dbfs" : "noise_\(weighting.rawValue)_dbfs"] = channel.idle.level(weighting)
            }
            for weighting in NoiseMeasurement.dynamicRangeWeightings {
                figures["dynamic_range_\(weighting.rawValue)_db"] = channel.dynamicRangeDB(weighting)
            }
            return (channel.outputPort, channel.inputPort, figures)
        }
    }
}

extension IntermodulationMeasurement.Result: LimitedResult {
    public static let measurementName = "imd"
    public var limitedFigures: [(outputPort: String, inputPort: String, figures: [String: Double])] {
        channels.map { channel in
            (channel.outputPort, channel.inputPort,
             Dictionary(uniqueKeysWithValues: channel.analyses.map { ("\($0.test.rawValue)_db", $0.dB) }))
        }
    }
}

extension CrosstalkMeasurement.Result: LimitedResult {
    public static let measurementName = "crosstalk"
    /// Per channel that heard others: the most it heard at 997 Hz
    /// (`crosstalk_db`) and at any frequency of the sweep
    /// (`crosstalk_max_db`); and the channels' gain and phase match.
    public var limitedFigures: [(outputPort: String, inputPort: String, figures: [String: Double])] {
        channels.indices.map { index in
            let heard = leaks.filter { $0.victim == index }
            return (channels[index].outputPort, channels[index].inputPort, [
                "crosstalk_db": heard.map(\.crosstalkDB).max() ?? -.infinity,
                "crosstalk_max_db": heard.flatMap { $0.response.map(\.crosstalkDB) }.max() ?? -.infinity,
                "gain_match_db": gainMatchDB, "phase_match_deg": phaseMatchDegrees,
            ])
        }
    }
}
