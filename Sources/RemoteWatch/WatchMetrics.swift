import Metering
import Prometheus
import Synchronization

/// The Prometheus exposition of `GET /metrics` (swift-prometheus's
/// registry and text format). Levels below anything measurable are -Inf,
/// loudness below the gate NaN.
final class WatchMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let momentary: Gauge
    private let shortTerm: Gauge
    private let integrated: Gauge
    private let loudnessRange: Gauge
    private let xruns: Counter
    private let serverUp: Gauge
    private let resets: Counter
    private let silence: Gauge
    private let viewers: Gauge
    /// Per channel (1-based label), made at the first reading that has it.
    private let channels = Mutex<[Int: (samplePeak: Gauge, truePeak: Gauge)]>([:])
    private let record: RecordCounters?
    /// Per compliance alarm (`alarm` label), made when a target is set.
    private let loudnessAlarms = Mutex<[LoudnessAlarm.Kind: Gauge]>([:])

    private final class RecordCounters: Sendable {
        let framesWritten: Counter
        let overruns: Counter
        let gapFrames: Counter
        let clockRateError: Gauge
        let diskFree: Gauge
        let diskSize: Gauge
        /// The totals last exposed: the counters move by the difference.
        let last = Mutex<(frames: Int64, overruns: Int, gapFrames: Int64)>((0, 0, 0))

        init(_ registry: PrometheusCollectorRegistry) {
            framesWritten = registry.makeCounter(descriptor: metric(
                "jas_record_frames_written", unit: "total", "Frames on the take's timeline, gaps written as silence included"))
            overruns = registry.makeCounter(descriptor: metric(
                "jas_record_overruns", unit: "total", "Times the ring to the disk was full (each a logged gap)"))
            gapFrames = registry.makeCounter(descriptor: metric(
                "jas_record_gap_frames", unit: "total", "Frames written as silence for a logged reason"))
            clockRateError = registry.makeGauge(descriptor: metric(
                "jas_record_clock_rate_error", unit: "ppm",
                "The sample clock's rate against the wall clock, parts per million (NaN until measured)"))
            clockRateError.set(to: .nan)
            diskFree = registry.makeGauge(descriptor: metric(
                "jas_record_disk_free", unit: "bytes",
                "Bytes free for unprivileged writers on the disk the take is written to (NaN until known)"))
            diskSize = registry.makeGauge(descriptor: metric(
                "jas_record_disk_size", unit: "bytes", "Size of the disk the take is written to, bytes"))
            diskFree.set(to: .nan)
            diskSize.set(to: .nan)
        }
    }

    init(recording: Bool) {
        momentary = registry.makeGauge(descriptor: metric("jas_momentary", unit: "lufs", "EBU R128 momentary loudness (400 ms), LUFS"))
        shortTerm = registry.makeGauge(descriptor: metric("jas_shortterm", unit: "lufs", "EBU R128 short-term loudness (3 s), LUFS"))
        integrated = registry.makeGauge(descriptor: metric(
            "jas_integrated", unit: "lufs", "EBU R128 integrated loudness of the programme, LUFS"))
        loudnessRange = registry.makeGauge(descriptor: metric("jas_loudness_range", unit: "lu", "EBU Tech 3342 loudness range, LU"))
        xruns = registry.makeCounter(descriptor: metric("jas_xruns", unit: "total", "Xruns the JACK server reported"))
        serverUp = registry.makeGauge(descriptor: metric("jas_server_up", "1 while the JACK server runs, 0 while it is gone"))
        resets = registry.makeCounter(descriptor: metric(
            "jas_media_services_resets", unit: "total", "Times the session came back after its JACK server went away"))
        silence = registry.makeGauge(descriptor: metric("jas_silence", "1 while the silence alarm is on (dead air)"))
        viewers = registry.makeGauge(descriptor: metric("jas_http_websocket_viewers", "WebSocket viewers connected"))
        record = recording ? RecordCounters(registry) : nil
        for gauge in [momentary, shortTerm, integrated, loudnessRange] { gauge.set(to: .nan) }
        serverUp.set(to: 1)
        silence.set(to: 0)
        viewers.set(to: 0)
    }

    func update(_ reading: MeterReading) {
        momentary.set(to: reading.momentaryLUFS ?? .nan)
        shortTerm.set(to: reading.shortTermLUFS ?? .nan)
        integrated.set(to: reading.integratedLUFS ?? .nan)
        loudnessRange.set(to: reading.loudnessRangeLU ?? .nan)
        for channel in reading.channels {
            let gauges = channels.withLock { gauges in
                if let made = gauges[channel.channel] { return made }
                let labels = [("channel", String(channel.channel))]
                let made = (registry.makeGauge(descriptor: metric(
                                "jas_sample_peak", unit: "dbfs", "Highest sample level of the last reading, dBFS"), labels: labels),
                            registry.makeGauge(descriptor: metric(
                                "jas_true_peak", unit: "dbtp", "Highest true peak (4x oversampled) of the last reading, dBTP"),
                                labels: labels))
                gauges[channel.channel] = made
                return made
            }
            gauges.samplePeak.set(to: channel.samplePeakDBFS)
            gauges.truePeak.set(to: channel.truePeakDBTP)
        }
    }

    func addXruns(_ count: Int) { if count > 0 { xruns.increment(by: Double(count)) } }

    func setServerUp(_ up: Bool) { serverUp.set(to: up ? 1 : 0) }

    func addReset() { resets.increment() }

    func setSilence(_ on: Bool) { silence.set(to: on ? 1 : 0) }

    func setViewers(_ count: Int) { viewers.set(to: Double(count)) }

    /// A target is kept: its alarms are exposed, each 0 until it is on.
    func watchLoudness() {
        loudnessAlarms.withLock { gauges in
            for kind in LoudnessAlarm.Kind.allCases where gauges[kind] == nil {
                gauges[kind] = registry.makeGauge(descriptor: metric(
                    "jas_loudness_alarm", "1 while the loudness compliance alarm is on (too_loud, too_quiet, true_peak_over)"),
                    labels: [("alarm", kind.rawValue)])
                gauges[kind]?.set(to: 0)
            }
        }
    }

    func setLoudnessAlarm(_ kind: LoudnessAlarm.Kind, on: Bool) {
        loudnessAlarms.withLock { $0[kind] }?.set(to: on ? 1 : 0)
    }

    func updateRecord(framesWritten: Int64, overruns: Int, gapFrames: Int64, clockRateErrorPPM: Double?) {
        guard let record else { return }
        record.clockRateError.set(to: clockRateErrorPPM ?? .nan)
        let moves = record.last.withLock { last -> (Int64, Int, Int64) in
            defer { last = (max(last.frames, framesWritten), max(last.overruns, overruns), max(last.gapFrames, gapFrames)) }
            return (framesWritten - last.frames, overruns - last.overruns, gapFrames - last.gapFrames)
        }
        if moves.0 > 0 { record.framesWritten.increment(by: Double(moves.0)) }
        if moves.1 > 0 { record.overruns.increment(by: Double(moves.1)) }
        if moves.2 > 0 { record.gapFrames.increment(by: Double(moves.2)) }
    }

    /// The disk the take is written to: bytes free and its size.
    func updateDisk(freeBytes: Double, sizeBytes: Double) {
        record?.diskFree.set(to: freeBytes)
        record?.diskSize.set(to: sizeBytes)
    }

    /// The exposition text (`text/plain; version=0.0.4`).
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}

/// A metric's name (`name` and its unit, joined by an underscore) and its
/// `# HELP` text.
private func metric(_ name: String, unit: String = "", _ help: String) -> MetricNameDescriptor {
    MetricNameDescriptor(metricName: name, unitName: unit, helpText: help)
}
