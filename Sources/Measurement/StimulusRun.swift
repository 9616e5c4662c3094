import JackAudioSession

/// The part every analyzer measurement shares: one session in measurement
/// mode on `--out`/`--in` pairs plays prepared stimuli, one after another,
/// out of every output and records every input (`RealtimeStimulusRecorder`:
/// the real-time side only copies). A run an xrun falls into is spoilt: it
/// is said (`onSpoiltRun`) and played again, `maximumAttempts` times at most.
struct StimulusRun {
    var serverName: String
    var clientName: String
    var outputPorts: [String]
    var inputPorts: [String]
    var maximumAttempts: Int
    var onSpoiltRun: (@Sendable (String) -> Void)?

    /// What came back.
    struct Recording {
        let sampleRate: Int
        let periodFrames: Int
        /// For each stimulus, what each input recorded (as long as the stimulus).
        let captures: [[[Float]]]
        /// Runs made in all, the spoilt ones too.
        let attempts: Int
    }

    /// Opens the session, asks `stimuli` what to play at the server's sample
    /// rate, plays each in turn, and returns what came back. Blocking.
    func record(_ stimuli: (_ sampleRate: Int) throws(AnalyzerFailure) -> [[Float]]) throws(AnalyzerFailure) -> Recording {
        guard !outputPorts.isEmpty, outputPorts.count == inputPorts.count else {
            throw .invalidSetting("give as many --in ports as --out ports (\(outputPorts.count) --out, \(inputPorts.count) --in)")
        }
        // Capturing its own test signal is what the caller asked for.
        let session = AudioSession(clientName: clientName, serverName: serverName, recordConsent: .givenByCaller)
        defer { session.close() }
        do {
            try session.prepareMeasurement(outputPorts: outputPorts, inputPorts: inputPorts)
            try session.setActive(true)
        } catch {
            throw .session(error)
        }
        let rate = Int(session.sampleRate)
        let period = session.ioBufferFrames
        var captures: [[[Float]]] = []
        var attempts = 0
        for stimulus in try stimuli(rate) {
            let recorder = RealtimeStimulusRecorder(stimulus: stimulus, channels: inputPorts.count)
            do {
                // A render block goes in while the session is inactive, as every measurement here does.
                try session.setActive(false)
                session.setRenderBlock(recorder.renderBlock)
                try session.setActive(true)
            } catch {
                throw .session(error)
            }
            let (tries, problem) = play(recorder, session: session, sampleRate: rate)
            attempts += tries
            if let problem { throw .spoilt(attempts: tries, reason: problem) }
            captures.append((0..<inputPorts.count).map { recorder.captured(channel: $0) })
        }
        return Recording(sampleRate: rate, periodFrames: period, captures: captures, attempts: attempts)
    }

    /// Plays the recorder's stimulus until a run has no xrun in it: the runs
    /// made, and what spoilt the last one (nil: it was clean).
    private func play(_ recorder: RealtimeStimulusRecorder, session: AudioSession,
                      sampleRate: Int) -> (attempts: Int, problem: String?) {
        let timeout = Double(recorder.length) / Double(sampleRate) * 3 + 5
        var attempts = 0
        var problem = ""
        while attempts < maximumAttempts {
            attempts += 1
            let xrunsBefore = session.xrunCount
            if attempts == 1 { recorder.arm() } else { recorder.playAgain() }
            _ = recorder.waitUntilComplete(timeout: timeout)
            let xruns = session.xrunCount - xrunsBefore
            // Not complete: the real-time side owns the run until it is; it is not played again.
            guard recorder.isComplete else { return (attempts, "the server ran no cycles for \(Int(timeout)) s") }
            if xruns == 0 { return (attempts, nil) }
            problem = "\(xruns) xrun\(xruns == 1 ? "" : "s") during the run"
            if attempts < maximumAttempts { onSpoiltRun?(problem) }
        }
        return (attempts, problem)
    }
}
