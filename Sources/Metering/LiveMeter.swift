import JackAudioSession
import Capture
import Foundation
import JackKit
import Synchronization

/// Meters JACK ports as they play: a tap session (`TapSession`) whose
/// process callback only copies into a ring (`RealtimeCapture`), and a worker
/// thread that drains it into a `ProgrammeMeter` and hands out a reading
/// every `interval` seconds of audio. It survives a server restart (the
/// session rebuilds itself; metering goes on with the new server's audio).
public final class LiveMeter: @unchecked Sendable { // `connectedFrom` is set by `start` before the worker runs; the meter is behind `meterBox`, flags are atomics
    /// What to meter.
    public struct Configuration: Sendable {
        /// The JACK server (nil: `$JACK_DEFAULT_SERVER` or "default").
        public var serverName: String?
        /// Shell wildcards of ports (empty: the first two physical capture ports).
        public var portPatterns: [String] = []
        /// Loudspeaker positions (nil: mono, stereo or 5.1 by channel count, else weight 1 each).
        public var layout: ChannelLayout?
        /// Seconds of audio per reading.
        public var interval = 0.1
        /// The level that reads 0 VU, dBFS.
        public var vuReferenceDBFS = -18.0
        /// The K-system scale (12, 14 or 20): its 0 dB is that many dB below full scale.
        public var kScale = 14
        /// The JACK client name the meter opens.
        public var clientName = "jas-meter"

        /// The defaults: a reading every 0.1 s, 0 VU at −18 dBFS, K-14.
        public init() {}
    }

    public let configuration: Configuration
    /// The ports metered and their session.
    private let tap: TapSession
    /// The tap session.
    public var session: AudioSession { tap.session }
    private let meterBox = Mutex<IntervalMeter?>(nil)
    /// Set once `start` has made it.
    private var meter: IntervalMeter? { meterBox.withLock { $0 } }
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var connectedFrom: UInt32?
    private let xruns = Atomic<Int>(0)
    /// Set as the meter stops: its events are its owner's no more.
    private let deaf = Atomic<Bool>(false)

    /// Metered ports that went away, or came back (`seconds`: of audio
    /// metered; `awaySeconds` nil while away, `returned` false when the meter
    /// stopped first).
    public struct SourceChange: Sendable, Equatable {
        /// The JACK ports the meter reads (now, or when they went).
        public var ports: [String]
        /// When the change happened, seconds of audio metered.
        public var seconds: Double
        /// How long the source was away (nil: it is away now).
        public var awaySeconds: Double?
        /// False when the meter stopped before the source came back.
        public var returned: Bool
    }

    /// A meter with `configuration`; it opens nothing until it starts.
    public init(configuration: Configuration) {
        self.configuration = configuration
        tap = TapSession(clientName: configuration.clientName, serverName: configuration.serverName)
    }

    deinit {
        tap.close()
    }

    /// The ports metered, channel order (after `start`).
    public var ports: [String] { tap.ports }

    /// Resolves the ports, starts the session and the worker; `onReading` is
    /// called on the worker for every interval, `onEvent` with every event of
    /// the session (the meter reads the session's one event stream itself).
    public func start(onReading: @escaping @Sendable (MeterReading) -> Void,
                      onEvent: @escaping @Sendable (AudioSessionEvent) -> Void = { _ in },
                      onSource: @escaping @Sendable (SourceChange) -> Void = { _ in }) throws(MeteringError) {
        do {
            try tap.resolve(configuration.portPatterns, channels: nil)
        } catch {
            throw .capture(error)
        }
        if let layout = configuration.layout, layout.channelCount != ports.count {
            throw .layoutMismatch(layout: layout, channels: ports.count,
                                  source: "the ports matched (\(ports.joined(separator: ", ")))")
        }
        var meterConfiguration = ProgrammeMeter.Configuration(
            channels: ports.count, sampleRate: tap.sampleRate,
            layout: configuration.layout ?? ChannelLayout.standard(forChannels: ports.count), sources: ports)
        meterConfiguration.vuReferenceDBFS = configuration.vuReferenceDBFS
        meterConfiguration.kScale = configuration.kScale
        meterConfiguration.joinsMidStream = true
        let meter = try IntervalMeter(configuration: meterConfiguration, interval: configuration.interval,
                                      onReading: onReading)
        let capture: RealtimeCapture
        do {
            capture = try tap.start(ringSeconds: 2)
        } catch {
            throw .session(error)
        }
        connectedFrom = tap.connectedFrom
        // Set only now: `stop` waits for the worker when there is a meter.
        meterBox.withLock { $0 = meter }
        watchSources(rate: Double(tap.sampleRate), onSource: onSource)
        watchSession(onEvent: onEvent)
        let thread = Thread { [self] in drain(meter: meter, capture: capture) }
        thread.start()
    }

    /// Says when metered ports go away and come back (a client that ends, an
    /// unplugged device), in seconds of audio metered.
    private func watchSources(rate: Double, onSource: @escaping @Sendable (SourceChange) -> Void) {
        tap.watchSources(
            isWatching: { [weak self] in self.map { !$0.stopping.load(ordering: .acquiring) && $0.session.isActive } ?? false },
            position: { [weak self] _ in
                guard let self else { return 0 }
                return Int64(((meter?.seconds ?? 0) * rate).rounded())
            },
            onLost: { absence in
                onSource(SourceChange(ports: absence.ports, seconds: Double(absence.at) / rate, awaySeconds: nil, returned: false))
            },
            onBack: { absence, end, frameTime in
                onSource(SourceChange(ports: absence.ports, seconds: Double(end) / rate,
                                      awaySeconds: Double(end - absence.at) / rate, returned: frameTime != nil))
            })
    }

    /// Hands on the session's events, counting its xruns (the tap looks at
    /// the sources on a route change and activates again when an
    /// interruption ends).
    private func watchSession(onEvent: @escaping @Sendable (AudioSessionEvent) -> Void) {
        tap.watchEvents { [weak self] event in
            guard let self, !self.deaf.load(ordering: .acquiring) else { return }
            if case let .xrun(count, _, _, _) = event { self.xruns.add(count, ordering: .relaxed) }
            onEvent(event)
        }
    }

    /// Stops the session, meters what the ring still holds and returns the summary.
    public func stop() -> MeterSummary? {
        deaf.store(true, ordering: .releasing)
        // Not one cycle more: a step into the silence of jackd's
        // deactivation reads as a true peak above the signal's.
        tap.stopListening()
        if !stopping.exchange(true, ordering: .acquiringAndReleasing), meter != nil {
            tap.capture?.wakeup.wakeNow()
            finished.wait()
        }
        tap.close()
        return (meter?.summary()).map { summary in
            var summary = summary
            summary.xruns = xruns.load(ordering: .relaxed)
            return summary
        }
    }

    /// Starts the programme's figures again (see `ProgrammeMeter.resetProgramme`).
    public func resetProgramme() { meter?.resetProgramme() }

    /// Pauses or resumes the programme's figures; readings go on.
    public func setProgrammePaused(_ paused: Bool) { meter?.setProgrammePaused(paused) }

    private func drain(meter: IntervalMeter, capture: RealtimeCapture) {
        let reader = CaptureReader(capture)
        while true {
            let stop = stopping.load(ordering: .acquiring)
            let drained = reader.drain { header, samples in
                if let floor = connectedFrom {
                    if Int32(bitPattern: header.frameTime &- floor) < 0 { return }
                    connectedFrom = nil
                }
                meter.add(samples.baseAddress!, frames: header.frames)
            }
            if stop && drained == 0 { break }
            // Woken by the callback every cycle; the timeout sees a stop while no cycles run.
            if drained == 0 { capture.wakeup.wait(timeout: 0.05) }
        }
        finished.signal()
    }
}
