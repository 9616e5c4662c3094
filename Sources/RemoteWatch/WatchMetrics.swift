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
            framesWritten = registry.makeCounter(name: "jas_record_frames_written_total",
                                                 help: "Frames on the take's timeline, gaps written as silence included")
            overruns = registry.makeCounter(name: "jas_record_overruns_total",
                                            help: "Times the ring to the disk was full (each a logged gap)")
            gapFrames = registry.makeCounter(name: "jas_record_gap_frames_total",
                                             help: "Frames written as silence for a logged reason")
            clockRateError = registry.makeGauge(name: "jas_record_clock_rate_error_ppm",
                                                help: "The sample clock's rate against the wall clock, parts per million (NaN until measured)")
            clockRateError.set(to: .nan)
            diskFree = registry.makeGauge(name: "jas_record_disk_free_bytes",
                                          help: "Bytes free for unprivileged writers on the disk the take is written to (NaN until known)")
            diskSize = registry.makeGauge(name: "jas_record_disk_size_bytes", help: "Size of the disk the take is written to, bytes")
            diskFree.set(to: .nan)
            diskSize.set(to: .nan)
        }
    }

    init(recording: Bool) {
        momentary = registry.makeGauge(name: "jas_momentary_lufs", help: "EBU R128 momentary loudness (400 ms), LUFS")
        shortTerm = registry.makeGauge(name: "jas_shortterm_lufs", help: "EBU R128 short-term loudness (3 s), LUFS")
        integrated = registry.makeGauge(name: "jas_integrated_lufs", help: "EBU R128 integrated loudness of the programme, LUFS")
        loudnessRange = registry.makeGauge(name: "jas_loudness_range_lu", help: "EBU Tech 3342 loudness range, LU")
        xruns = registry.makeCounter(name: "jas_xruns_total", help: "Xruns the JACK server reported")
        serverUp = registry.makeGauge(name: "jas_server_up", help: "1 while the JACK server runs, 0 while it is gone")
        resets = registry.makeCounter(name: "jas_media_services_resets_total",
                                      help: "Times the session came back after its JACK server went away")
        silence = registry.makeGauge(name: "jas_silence", help: "1 while the silence alarm is on (dead air)")
        viewers = registry.makeGauge(name: "jas_http_websocket_viewers", help: "WebSocket viewers connected")
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
                let made = (registry.makeGauge(name: "jas_sample_peak_dbfs", labels: labels,
                                               help: "Highest sample level of the last reading, dBFS"),
                            registry.makeGauge(name: "jas_true_peak_dbtp", labels: labels,
                                               help: "Highest true peak (4x oversampled) of the last reading, dBTP"))
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
                gauges[kind] = registry.makeGauge(name: "jas_loudness_alarm", labels: [("alarm", kind.rawValue)],
                                                  help: "1 while the loudness compliance alarm is on (too_loud, too_quiet, true_peak_over)")
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
