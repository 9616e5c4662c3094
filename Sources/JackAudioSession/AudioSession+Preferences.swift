import Foundation
import JackKit
import JackRuntime

extension AudioSession {
    // MARK: Preferences (requests; the server decides)

    /// The I/O buffer duration the app asked for, seconds (0: none).
    public var preferredIOBufferDuration: Double { board.read { $0.preferences.ioBufferDuration ?? 0 } }

    /// Asks for an I/O buffer duration, seconds. Applied on activation (and at
    /// once when active) as a JACK period-size request: the power of two
    /// nearest to duration × sample rate, within 16…4096 frames. As the guide
    /// says, "the system gives priority to non-mixable sessions": a mixable
    /// session's request is not made while another, non-mixable session is
    /// active on the server (`ioBufferDuration` says what the server runs).
    public func setPreferredIOBufferDuration(_ seconds: Double) throws(AudioSessionError) {
        guard seconds.isFinite, seconds > 0 else {
            throw AudioSessionError(.badParam, "preferred I/O buffer duration must be a positive number of seconds, got \(seconds)")
        }
        let request = try core.sync { core throws(AudioSessionError) -> (Client, Int, RealtimeProcessor)? in
            core.preferences.ioBufferDuration = seconds
            guard let client = core.activeClient, let processor = core.activation.processor,
                  let frames = try core.requestPeriod(for: seconds, on: client) else {
                return nil
            }
            return (client, frames, processor)
        }
        // Off the queue: returns once the server runs it (at most a second).
        if let (client, frames, processor) = request { SessionCore.awaitPeriod(frames, on: client, processor) }
    }

    /// The sample rate the app asked for, Hz (0: none). A running JACK server
    /// keeps its rate; compare with `sampleRate`, or read `sampleRateMismatch`.
    public var preferredSampleRate: Double { board.read { $0.preferences.sampleRate ?? 0 } }

    /// Stores a preferred sample rate, Hz. JACK cannot change a running
    /// server's rate: when the server runs another, `sampleRateMismatch` says
    /// so, and so does a `sampleRateMismatch` event (now, when the session
    /// reaches a server, and after a reset to a server at another rate).
    public func setPreferredSampleRate(_ rate: Double) throws(AudioSessionError) {
        guard rate.isFinite, rate > 0 else {
            throw AudioSessionError(.badParam, "preferred sample rate must be a positive number of Hz, got \(rate)")
        }
        core.sync { core in
            core.preferences.sampleRate = rate
            core.checkSampleRate()
        }
    }

    /// The preferred rate and the server's, when they differ (nil: they match,
    /// there is no preference, or no server has been reached).
    public var sampleRateMismatch: SampleRateMismatch? { board.read { $0.sampleRateMismatch } }

    /// The number of input channels the session registers at activation
    /// (default 2, clamped to the route unless set explicitly).
    public var preferredInputNumberOfChannels: Int { board.read { $0.preferences.inputChannels ?? 2 } }

    /// The number of output channels the session registers at activation.
    public var preferredOutputNumberOfChannels: Int { board.read { $0.preferences.outputChannels ?? 2 } }

    /// Asks for `count` input channels; more than `maximumInputNumberOfChannels`
    /// is `badParam` (checked now when the server is known, else at activation),
    /// and under a category without input `incompatibleCategory`, as the Class
    /// Reference's own example of that error says.
    public func setPreferredInputNumberOfChannels(_ count: Int) throws(AudioSessionError) {
        try core.sync { core throws(AudioSessionError) in
            try core.requireCategory(input: true, "setPreferredInputNumberOfChannels")
            try core.checkChannelCount(count, maximum: core.openClient == nil ? nil : core.routeMaxima().inputs,
                                       direction: "input")
            core.preferences.inputChannels = count
        }
    }

    /// Asks for `count` output channels; more than the maximum is `badParam`,
    /// and under a category without output `incompatibleCategory`. Zero is
    /// allowed: a playAndRecord session with `.mixWithOthers` and no
    /// outputs only listens, and neither interrupts others nor is interrupted
    /// by them (a recorder tapping ports).
    public func setPreferredOutputNumberOfChannels(_ count: Int) throws(AudioSessionError) {
        try core.sync { core throws(AudioSessionError) in
            try core.requireCategory(input: false, "setPreferredOutputNumberOfChannels")
            if count != 0 {
                try core.checkChannelCount(count, maximum: core.openClient == nil ? nil : core.routeMaxima().outputs,
                                           direction: "output")
            }
            core.preferences.outputChannels = count
        }
    }

    /// The JACK ports the session's inputs connect to, in channel order
    /// (empty: the route's input device).
    public var preferredInputPortNames: [String] { board.read { $0.preferences.inputPortNames } }

    /// Names the ports the session's inputs connect to (e.g. `loopback:capture_1`),
    /// bypassing the route rules. Takes effect at the next activation.
    public func setPreferredInputPortNames(_ names: [String]) {
        core.sync { $0.preferences.inputPortNames = names }
    }

    /// The JACK ports the session's outputs connect to, in channel order
    /// (empty: the route's output device).
    public var preferredOutputPortNames: [String] { board.read { $0.preferences.outputPortNames } }

    /// Names the ports the session's outputs connect to (e.g. `loopback:playback_1`).
    public func setPreferredOutputPortNames(_ names: [String]) {
        core.sync { $0.preferences.outputPortNames = names }
    }

    // MARK: What the server actually runs

    /// The server's sample rate, Hz (0 before the session first reached a server).
    public var sampleRate: Double { openClient.map { Double($0.sampleRate) } ?? 0 }

    /// The period the server actually runs, seconds; follows changes made by any client.
    public var ioBufferDuration: Double {
        guard let client = openClient else { return 0 }
        return Double(client.bufferSize) / Double(client.sampleRate)
    }

    /// The server's period, frames (0 before the session first reached a server).
    public var ioBufferFrames: Int { openClient?.bufferSize ?? 0 }

    /// Capture latency of the session's inputs, seconds: the largest delay JACK
    /// reports from the capture hardware to the session; 0 when there is none
    /// to report (inactive, unconnected, or a category without input:
    /// `inputLatencyRange` throws `incompatibleCategory` then, for a caller
    /// that wants the reason; `reportedLatency` says unknown as nil).
    public var inputLatency: Double { seconds((try? inputLatencyRange)?.max ?? 0) }

    /// Playback latency of the session's outputs, seconds: the largest delay
    /// JACK reports from the session to the playback hardware; 0 when there is
    /// none to report (`outputLatencyRange` throws the reason).
    public var outputLatency: Double { seconds((try? outputLatencyRange)?.max ?? 0) }

    /// Capture latency range of the session's inputs, frames: the range of
    /// the ports they are connected to, plus the calibrated correction (what
    /// the session's latency callback gives them); zero when inactive or unconnected.
    public var inputLatencyRange: LatencyRange {
        get throws(AudioSessionError) {
            try requireInput("inputLatency")
            return board.read { $0.activation.ports?.inputLatencyRange } ?? .zero
        }
    }

    /// Playback latency range of the session's outputs, frames; zero when inactive or unconnected.
    public var outputLatencyRange: LatencyRange {
        get throws(AudioSessionError) {
            try requireOutput("outputLatency")
            return board.read { $0.activation.ports?.outputLatencyRange } ?? .zero
        }
    }

    /// What JACK's latency ranges say about the session's path now, with
    /// what is not known left nil (a direction the category lacks, no port
    /// connected, the session inactive), never 0 in its place.
    public var reportedLatency: ReportedLatency {
        board.read { board in
            guard let ports = board.activation.ports else { return ReportedLatency(capture: nil, playback: nil, settled: false) }
            return ReportedLatency(capture: ports.inputLatencyRange, playback: ports.outputLatencyRange,
                                   settled: ports.latencyIsSettled)
        }
    }

    /// The calibrated correction included in `inputLatency` and
    /// `outputLatency` (see `LatencyCalibrationStore`); none while inactive.
    public var latencyCorrection: LatencyCorrection {
        board.read { $0.activation.ports?.correction.withLock { $0 } } ?? .none
    }

    /// Input channels the active session has; 0 when inactive or under a
    /// category without input (`checkedInputNumberOfChannels()` throws
    /// `incompatibleCategory` then, for a caller that wants the reason).
    public var inputNumberOfChannels: Int { (try? checkedInputNumberOfChannels()) ?? 0 }

    /// Output channels the active session has; 0 when inactive or under a
    /// category without output (`checkedOutputNumberOfChannels()` throws then).
    public var outputNumberOfChannels: Int { (try? checkedOutputNumberOfChannels()) ?? 0 }

    /// `inputNumberOfChannels`, or `incompatibleCategory` under a category without input.
    public func checkedInputNumberOfChannels() throws(AudioSessionError) -> Int {
        try requireInput("inputNumberOfChannels")
        return board.read { $0.activation.ports?.inputs.count } ?? 0
    }

    /// `outputNumberOfChannels`, or `incompatibleCategory` under a category without output.
    public func checkedOutputNumberOfChannels() throws(AudioSessionError) -> Int {
        try requireOutput("outputNumberOfChannels")
        return board.read { $0.activation.ports?.outputs.count } ?? 0
    }

    /// The most input channels the session can have: the named ports, or the
    /// channels of the route's input device.
    public var maximumInputNumberOfChannels: Int { routeMaxima().inputs }

    /// The most output channels the session can have.
    public var maximumOutputNumberOfChannels: Int { routeMaxima().outputs }

    /// Full names of the session's own input ports.
    public var inputPortNames: [String] { board.read { $0.activation.ports?.inputs.map(\.name) } ?? [] }

    /// Full names of the session's own output ports.
    public var outputPortNames: [String] { board.read { $0.activation.ports?.outputs.map(\.name) } ?? [] }

    /// JACK has no hardware input gain: always 1.
    public var inputGain: Float { 1 }

    /// JACK has no hardware input gain: never settable.
    public var isInputGainSettable: Bool { false }

    /// Always fails: JACK has no hardware input gain to set.
    public func setInputGain(_ gain: Float) throws(AudioSessionError) {
        throw AudioSessionError(.badParam, "JACK has no hardware input gain (isInputGainSettable is false); "
                                    + "set the gain on the interface or in the signal chain")
    }

    /// The system output volume: JACK has none, so always 1.
    public var outputVolume: Float { 1 }

    // MARK: Record permission

    /// The decision for this application: the stored one, or granted when the
    /// caller gave consent.
    public var recordPermission: RecordPermission {
        recordConsent.permission(for: applicationName)
    }

    /// Whether the session's input is replaced by silence because record
    /// permission is not granted (as the seeds say of a recording category).
    public var isInputSilencedByPermission: Bool {
        board.read { $0.activation.processor?.silencesInputs } ?? false
    }

    /// Asks for record permission, and always returns at once, as the Class
    /// Reference says: a decision already made is re-read, applied to the input
    /// and given to `response` before this returns; an undetermined one is put
    /// to the prompt the app gave (`setRecordPermissionPrompt`) on a thread of
    /// its own, stored, applied, and `response` runs when the person has
    /// answered. Without a prompt (or when it cannot ask) the decision stays
    /// undetermined and `response` gets false. The library itself never reads
    /// the terminal.
    public func requestRecordPermission(_ response: @escaping @Sendable (Bool) -> Void) {
        let permission = recordPermission
        guard permission == .undetermined, case let .stored(store) = recordConsent,
              let prompt = core.sync({ $0.recordPermissionPrompt }) else {
            applyRecordPermission()
            response(permission == .granted)
            return
        }
        let (application, server) = (applicationName, serverName)
        Thread.detachNewThread { [weak self] in
            let answer = prompt(application, server)
            if let answer { try? store.set(answer ? .granted : .denied, for: application) }
            self?.applyRecordPermission()
            response(answer == true)
        }
    }

    /// `requestRecordPermission` for async code: the answer, once the person
    /// has given it (at once when it is decided). The seeds' block captures
    /// `self`, which Swift 6 refuses in a `@Sendable` block for a class that is
    /// not Sendable; from a `@MainActor` class write
    /// `Task { granted = await session.requestRecordPermission() }` instead.
    public func requestRecordPermission() async -> Bool {
        await withCheckedContinuation { continuation in
            requestRecordPermission { continuation.resume(returning: $0) }
        }
    }

    /// Who `requestRecordPermission` asks when the decision is undetermined
    /// (nil: nobody; the default). A headless machine has no dialog: a tool
    /// asks on its terminal (`jas permission request`), a service may ask its
    /// operator some other way.
    public func setRecordPermissionPrompt(_ prompt: RecordPermissionPrompt?) {
        core.sync { $0.recordPermissionPrompt = prompt }
    }

    /// Re-reads the stored decision and silences or restores the input now.
    public func applyRecordPermission() {
        core.sync { core in core.activation.processor?.setSilencesInputs(core.silencesInputForPermission) }
    }

    // MARK: Helpers

    func seconds(_ frames: Int) -> Double {
        let rate = sampleRate
        return rate > 0 ? Double(frames) / rate : 0
    }

    func requireInput(_ property: String) throws(AudioSessionError) {
        try SessionCore.require(category, input: true, property)
    }

    func requireOutput(_ property: String) throws(AudioSessionError) {
        try SessionCore.require(category, input: false, property)
    }

    func routeMaxima() -> (inputs: Int, outputs: Int) { core.sync { $0.routeMaxima() } }
}
