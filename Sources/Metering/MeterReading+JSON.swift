import Foundation

/// The readings as JSON objects with stable snake_case keys; levels below
/// anything measurable (−∞) and loudness below the gate are null.
extension ChannelReading {
    public var jsonObject: [String: Any] {
        ["channel": channel, "source": source, "sample_peak_dbfs": json(samplePeakDBFS),
         "true_peak_dbtp": json(truePeakDBTP), "rms_dbfs": json(rmsDBFS), "ppm_type_i_dbfs": json(ppmTypeIDBFS),
         "ppm_type_iib_dbfs": json(ppmTypeIIbDBFS), "vu": json(vu), "k_meter": json(kMeter)]
    }
}

extension MeterReading {
    public var jsonObject: [String: Any] {
        ["event": "reading", "seconds": seconds, "momentary_lufs": json(momentaryLUFS),
         "short_term_lufs": json(shortTermLUFS), "integrated_lufs": json(integratedLUFS),
         "lra_lu": json(loudnessRangeLU), "channels": channels.map(\.jsonObject)]
    }
}

extension MeterSummary {
    public var jsonObject: [String: Any] {
        ["event": "summary", "seconds": seconds, "programme_seconds": programmeSeconds, "sample_rate": sampleRate, "layout": layout,
         "integrated_lufs": json(integratedLUFS), "lra_lu": json(lraLU), "true_peak_dbtp": json(truePeakDBTP),
         "sample_peak_dbfs": json(samplePeakDBFS), "max_momentary_lufs": json(maxMomentaryLUFS),
         "max_short_term_lufs": json(maxShortTermLUFS), "channels": channels.map(\.jsonObject), "xruns": xruns]
    }
}

/// A level for JSON: rounded to 0.01 dB, null when not finite or absent.
func json(_ value: Double?) -> Any {
    guard let value, value.isFinite else { return NSNull() }
    return (value * 100).rounded() / 100
}
