import Foundation
import Measurement

/// What `jas analyze ... --report PAGE.html` writes: one self-contained HTML
/// page (no script, no network) of the measurements made, with SVG graphs
/// against frequency (response magnitude and phase, THD and the harmonics,
/// crosstalk), THD+N against level, tables of the single figures (stepped sine, noise and dynamic
/// range, IMD, channel match) and, with limits, the verdict first.
public struct AnalyzerReportPage {
    public var response: SweepMeasurement.Result?
    public var thd: SteppedSine.Result?
    public var levels: LevelStaircase.Result?
    public var noise: NoiseMeasurement.Result?
    public var imd: IntermodulationMeasurement.Result?
    public var crosstalk: CrosstalkMeasurement.Result?
    public var verdict: AnalyzerVerdict?
    /// The response's magnitude drawn smoothed over 1/N octave (nil: raw).
    public var smoothing: Int?

    /// An empty page; set the results there are.
    public init() {}

    /// The page, titled `title`.
    public func html(title: String) -> String {
        var page = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(ReportPage.escape(title))</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1050px; }
            h1 { font-size: 20px; margin: 0 0 .3em; } h2 { font-size: 16px; margin: 1.6em 0 .4em; }
            table { border-collapse: collapse; margin: .4em 0; } td, th { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; font-variant-numeric: tabular-nums; }
            th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
            .fail { color: #b00; font-weight: bold; } .pass { color: #262; } .note { color: #666; font-size: 12px; }
            svg { display: block; border: 1px solid #ccc; margin: .4em 0; background: #fff; }
            </style></head><body>
            <h1>\(ReportPage.escape(title))</h1>
            <p>\(ReportPage.escape(serverLine))</p>
            <p class="note">\(ReportPage.escape(SteppedSine.Result.levelConvention)).</p>

            """
        if let verdict { page += verdictSection(verdict) }
        if let response { page += responseSection(response) }
        if let thd { page += thdSection(thd) }
        if let levels { page += levelsSection(levels) }
        if let noise { page += noiseSection(noise) }
        if let imd { page += imdSection(imd) }
        if let crosstalk { page += crosstalkSection(crosstalk) }
        return page + "<p class=\"note\">Made by jas analyze.</p>\n</body></html>\n"
    }

    private var serverLine: String {
        let runs: [any AnalyzerResult] = [response as (any AnalyzerResult)?, thd, levels, noise, imd, crosstalk].compactMap { $0 }
        guard let first = runs.first else { return "no measurement" }
        return "server '\(first.serverName)', \(first.sampleRate) Hz, period \(first.periodFrames) frames"
    }

    private static func number(_ value: Double, _ decimals: Int = 2) -> String {
        guard value.isFinite else { return value.isNaN ? "not measured" : (value < 0 ? "−∞" : "+∞") }
        return String(format: "%.\(decimals)f", value + 0.0)
    }

    private func verdictSection(_ verdict: AnalyzerVerdict) -> String {
        var html = "<h2>Verdict: <span class=\"\(verdict.passed ? "pass" : "fail")\">\(verdict.passed ? "PASS" : "FAIL")</span></h2>\n"
            + "<p class=\"note\">limits from \(ReportPage.escape(verdict.source))</p>\n<table id=\"verdict\"><tr><th>measurement</th><th>channel</th>"
            + "<th>figure</th><th>measured</th><th>min</th><th>max</th><th>verdict</th></tr>\n"
        for row in verdict.rows {
            html += "<tr><td>\(row.measurement)</td><td>\(ReportPage.escape(row.outputPort)) → \(ReportPage.escape(row.inputPort))</td>"
                + "<td>\(row.figure)</td><td>\(Self.number(row.value))</td><td>\(row.bound.min.map { Self.number($0) } ?? "")</td>"
                + "<td>\(row.bound.max.map { Self.number($0) } ?? "")</td>"
                + "<td class=\"\(row.passed ? "pass" : "fail")\">\(row.passed ? "pass" : "FAIL")</td></tr>\n"
        }
        return html + "</table>\n"
    }

    private func responseSection(_ result: SweepMeasurement.Result) -> String {
        let sweep = result.sweep
        let band = sweep.startFrequency...sweep.endFrequency
        let fine = SweepAnalysis.logFrequencies(from: sweep.startFrequency, to: sweep.endFrequency, perOctave: 48)
        // A channel by the port it is read on: the legend has room for one port's name.
        func name(_ channel: SweepMeasurement.Channel) -> String { channel.inputPort }
        let magnitude = FrequencyPlot(id: "response-magnitude", unit: "dB", frequencies: band, series: result.channels.map { channel in
            let points = smoothing.map { channel.analysis.smoothed(at: fine, octaveFraction: $0) } ?? channel.analysis.points(at: fine)
            return .init(name: name(channel), points: points.map { ($0.frequency, $0.magnitudeDB) })
        })
        let phase = FrequencyPlot(id: "response-phase", unit: "degrees", frequencies: band, series: result.channels.map { channel in
            .init(name: name(channel), points: channel.analysis.points(at: fine).map { ($0.frequency, $0.phaseDegrees) })
        }, values: -180...180)
        var html = "<h2>Frequency response</h2>\n<p class=\"note\">\(ReportPage.escape(SweepMeasurement.Result.definition)); "
            + String(format: "a %.1f s sweep at %.1f dBFS", Double(sweep.sweepFrames) / Double(result.sampleRate), sweep.levelDBFS)
            + (smoothing.map { "; the magnitude smoothed over 1/\($0) octave (the phase raw)." } ?? ".")
            + "</p>\n" + magnitude.svg + "\n" + phase.svg + "\n"
        let thirds = SweepAnalysis.logFrequencies(from: sweep.startFrequency, to: sweep.endFrequency, perOctave: 12)
        var distortion: [FrequencyPlot.Series] = []
        for channel in result.channels {
            let points = thirds.compactMap { channel.analysis.distortion(at: $0) }
            distortion.append(.init(name: "THD " + name(channel), points: points.map { ($0.frequency, $0.thdDB ?? -.infinity) }))
            if channel.outputPort == result.channels.first?.outputPort {
                for order in 2...5 {
                    distortion.append(.init(name: "H\(order)", points: points.map { ($0.frequency, $0.harmonics[order] ?? -.infinity) }))
                }
                distortion.append(.init(name: "method floor", points: points.map { ($0.frequency, $0.floorDB) }))
            }
        }
        let noise = FrequencyPlot(id: "noise-floor", unit: "dBFS", frequencies: band, series: result.channels.map { channel in
            .init(name: name(channel), points: channel.noiseFloor.bands.map { ($0.frequency, $0.dBFS) })
        })
        html += "<h2>Noise floor against frequency</h2>\n<p class=\"note\">a silent pass after the sweep: the noise in "
            + "1/3-octave bands, dBFS (digital silence is not drawn).</p>\n" + noise.svg + "\n"
        html += "<h2>Harmonic distortion against frequency</h2>\n<p class=\"note\">from the sweep's harmonic responses, dB against the "
            + "fundamental; a harmonic is drawn only 20 dB above the method's own floor (drawn too); H2–H5 for the first channel.</p>\n"
            + FrequencyPlot(id: "thd-frequency", unit: "dB", frequencies: band, series: distortion).svg + "\n"
        return html
    }

    private func thdSection(_ result: SteppedSine.Result) -> String {
        var html = String(format: "<h2>Stepped sine, %.0f Hz at %.2f dBFS</h2>\n", result.frequency, result.levelDBFS)
            + "<table id=\"thd\"><tr><th>channel</th><th>gain dB</th><th>phase °</th><th>THD dB</th><th>THD %</th><th>THD+N dB</th>"
            + "<th>THD+N %</th><th>H2 dB</th><th>H3 dB</th></tr>\n"
        for channel in result.channels {
            let analysis = channel.analysis
            func harmonic(_ order: Int) -> String {
                Self.number(analysis.harmonics.first { $0.order == order }?.levelDB ?? .nan)
            }
            html += "<tr><td>\(ReportPage.escape(channel.outputPort)) → \(ReportPage.escape(channel.inputPort))</td>"
                + "<td>\(Self.number(channel.gainDB, 3))</td><td>\(Self.number(analysis.phaseDegrees))</td><td>\(Self.number(analysis.thdDB))</td>"
                + "<td>\(Self.number(analysis.thdPercent, 5))</td><td>\(Self.number(analysis.thdPlusNoiseDB))</td>"
                + "<td>\(Self.number(analysis.thdPlusNoisePercent, 5))</td><td>\(harmonic(2))</td><td>\(harmonic(3))</td></tr>\n"
        }
        let residual = FrequencyPlot(id: "thd-residual", unit: "dBFS", frequencies: HarmonicAnalysis.standardBand,
                                     series: result.channels.map { channel in
            .init(name: channel.inputPort, points: channel.residualSpectrum.bands.map { ($0.frequency, $0.dBFS) })
        })
        return html + "</table>\n<p class=\"note\">\(ReportPage.escape(SteppedSine.Result.thdPlusNoiseDefinition))</p>\n"
            + "<p class=\"note\">The THD+N residual's spectrum: all but the fundamental, in 1/12-octave bands, dBFS "
            + "(the harmonics stand out; digital silence is not drawn).</p>\n" + residual.svg + "\n"
    }

    private func levelsSection(_ result: LevelStaircase.Result) -> String {
        guard let lowest = result.channels.first?.steps.first?.levelDBFS,
              let highest = result.channels.first?.steps.last?.levelDBFS else { return "" }
        var series = result.channels.map { channel in
            FrequencyPlot.Series(name: channel.inputPort, points: channel.steps.map { ($0.levelDBFS, $0.analysis.thdPlusNoiseDB) })
        }
        series.append(.init(name: String(format: "%.0f dB (%.2g %%)", result.maximumLevelTHDN, pow(10, result.maximumLevelTHDN / 20) * 100),
                            points: [(lowest, result.maximumLevelTHDN), (highest, result.maximumLevelTHDN)]))
        var html = String(format: "<h2>THD+N against level, %.0f Hz</h2>\n", result.frequency)
            + FrequencyPlot(id: "thd-n-level", unit: "THD+N dB", frequencies: lowest...highest, series: series, levelAxis: "dBFS").svg
            + "\n<table id=\"max-level\"><tr><th>channel</th><th>maximum level dBFS</th><th>THD+N at the highest step dB</th></tr>\n"
        for channel in result.channels {
            html += "<tr><td>\(ReportPage.escape(channel.outputPort)) → \(ReportPage.escape(channel.inputPort))</td>"
                + "<td>\(channel.maximumLevel.dBFS.map { Self.number($0) } ?? ReportPage.escape(channel.maximumLevel.kind))</td>"
                + "<td>\(Self.number(channel.steps.last?.analysis.thdPlusNoiseDB ?? .nan))</td></tr>\n"
        }
        return html + "</table>\n<p class=\"note\">\(ReportPage.escape(LevelStaircase.Result.maximumLevelDefinition))</p>\n"
    }

    private func noiseSection(_ result: NoiseMeasurement.Result) -> String {
        var html = "<h2>Noise and dynamic range</h2>\n<table id=\"noise\"><tr><th>channel</th>"
            + Weighting.allCases.map { "<th>noise \($0.rawValue) dBFS</th>" }.joined() + "<th>noise 468 quasi-peak dBFS</th>"
            + "<th>SNR dB</th>" + NoiseMeasurement.dynamicRangeWeightings.map { "<th>DR \($0.rawValue) dB</th>" }.joined() + "</tr>\n"
        for channel in result.channels {
            html += "<tr><td>\(ReportPage.escape(channel.outputPort)) → \(ReportPage.escape(channel.inputPort))</td>"
                + Weighting.allCases.map { "<td>\(Self.number(channel.idle.level($0)))</td>" }.joined()
                + "<td>\(Self.number(channel.quasiPeak468DBFS))</td>"
                + "<td>\(Self.number(channel.signalToNoiseDB))</td>"
                + NoiseMeasurement.dynamicRangeWeightings.map { "<td>\(Self.number(channel.dynamicRangeDB($0)))</td>" }.joined() + "</tr>\n"
        }
        let spectrum = FrequencyPlot(id: "noise-spectrum", unit: "dBFS", frequencies: HarmonicAnalysis.standardBand,
                                     series: result.channels.map { channel in
            .init(name: channel.inputPort, points: channel.idleSpectrum.bands.map { ($0.frequency, $0.dBFS) })
        })
        return html + "</table>\n<p class=\"note\">" + (Weighting.allCases.map(\.definition) + [NoiseMeasurement.quasiPeak468Definition])
            .map { ReportPage.escape($0) }.joined(separator: "; ")
            + ". " + ReportPage.escape(NoiseMeasurement.Result.dynamicRangeDefinition) + ".</p>\n"
            + "<p class=\"note\">The idle channel's noise spectrum: 1/3-octave bands, dBFS, unweighted (digital silence is not drawn).</p>\n"
            + spectrum.svg + "\n"
    }

    private func imdSection(_ result: IntermodulationMeasurement.Result) -> String {
        let tests = result.channels.first?.analyses.map(\.test) ?? []
        var html = String(format: "<h2>Intermodulation at %.2f dBFS</h2>\n", result.levelDBFS)
            + "<table id=\"imd\"><tr><th>channel</th>" + tests.map { "<th>\($0.rawValue.uppercased()) dB</th>" }.joined() + "</tr>\n"
        for channel in result.channels {
            html += "<tr><td>\(ReportPage.escape(channel.outputPort)) → \(ReportPage.escape(channel.inputPort))</td>"
                + channel.analyses.map { "<td>\(Self.number($0.dB))</td>" }.joined() + "</tr>\n"
        }
        return html + "</table>\n<p class=\"note\">"
            + tests.map { "\($0.rawValue.uppercased()): \(ReportPage.escape($0.definition))" }.joined(separator: "<br>") + "</p>\n"
    }

    private func crosstalkSection(_ result: CrosstalkMeasurement.Result) -> String {
        let frequencies = result.leaks.flatMap { $0.response.map(\.frequency) }
        var html = "<h2>Crosstalk and channel match</h2>\n"
            + String(format: "<p>gain match %.3f dB, phase match %.2f° at 997 Hz</p>\n", result.gainMatchDB, result.phaseMatchDegrees)
        if let low = frequencies.min(), let high = frequencies.max(), high > low {
            html += FrequencyPlot(id: "crosstalk-frequency", unit: "dB", frequencies: low...high, series: result.leaks.map { leak in
                .init(name: "\(result.channels[leak.driven].inputPort) into \(result.channels[leak.victim].inputPort)",
                      points: leak.response.map { ($0.frequency, $0.crosstalkDB) })
            }).svg + "\n"
        }
        html += "<table id=\"crosstalk\"><tr><th>driven</th><th>heard on</th><th>at 997 Hz dB</th></tr>\n"
        for leak in result.leaks {
            html += "<tr><td>\(ReportPage.escape(result.channels[leak.driven].outputPort))</td>"
                + "<td>\(ReportPage.escape(result.channels[leak.victim].inputPort))</td><td>\(Self.number(leak.crosstalkDB))</td></tr>\n"
        }
        return html + "</table>\n<p class=\"note\">\(ReportPage.escape(CrosstalkMeasurement.Result.definition))</p>\n"
    }
}
