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
    /// Told when a run starts, and of interruptions and the measuring again after them.
    var onNotice: (@Sendable (AnalyzerNotice) -> Void)?

    /// What came back.
    struct Recording {
        let sampleRate: Int
        let periodFrames: Int
        /// For each stimulus, what each input recorded (as long as the stimulus).
        let captures: [[[Float]]]
        /// Runs made in all, the spoilt ones too.
        let attempts: Int
    }

    /// What one run plays: samples, on every output or on those listed (by index; silence on the others).
    struct Stimulus {
        var samples: [Float]
        var outputs: Set<Int>? = nil
    }

    /// Opens the session, asks `stimuli` what to play at the server's sample
    /// rate, plays each on every output in turn, and returns what came back. Blocking.
    func record(_ stimuli: (_ sampleRate: Int) throws(AnalyzerFailure) -> [[Float]]) throws(AnalyzerFailure) -> Recording {
        try record { (rate: Int) throws(AnalyzerFailure) -> [Stimulus] in try stimuli(rate).map { Stimulus(samples: $0) } }
    }

    /// The same, each run played on the outputs it names.
    func record(_ stimuli: (_ sampleRate: Int) throws(AnalyzerFailure) -> [Stimulus]) throws(AnalyzerFailure) -> Recording {
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
        let watch = InterruptionWatch(session: session, onNotice: onNotice)
        defer { watch.stop() }
        var captures: [[[Float]]] = []
        var attempts = 0
        let all = try stimuli(rate)
        for (index, stimulus) in all.enumerated() {
            let recorder = RealtimeStimulusRecorder(stimulus: stimulus.samples, channels: inputPorts.count,
                                                    outputs: stimulus.outputs, outputCount: outputPorts.count)
            do {
                // A render block goes in while the session is inactive, as every measurement here does.
                try session.setActive(false)
                session.setRenderBlock(recorder.renderBlock)
                try session.setActive(true)
            } catch {
                throw .session(error)
            }
            onNotice?(.playing(run: index + 1, of: all.count, seconds: Double(stimulus.samples.count) / Double(rate)))
            let (tries, problem) = play(recorder, stimulus: stimulus, session: session, sampleRate: rate, watch: watch)
            attempts += tries
            if let problem { throw .spoilt(attempts: tries, reason: problem) }
            captures.append((0..<inputPorts.count).map { recorder.captured(channel: $0) })
        }
        return Recording(sampleRate: rate, periodFrames: period, captures: captures, attempts: attempts)
    }

    /// Plays the recorder's stimulus until a run has no xrun and no dropout
    /// (`DropoutCheck`) in it: the runs made, and what spoilt the last one
    /// (nil: it was clean).
    private func play(_ recorder: RealtimeStimulusRecorder, stimulus: Stimulus, session: AudioSession, sampleRate: Int,
                      watch: InterruptionWatch) -> (attempts: Int, problem: String?) {
        let timeout = Double(recorder.length) / Double(sampleRate) * 3 + 5
        var attempts = 0
        var problem = ""
        var armed = false
        while attempts < maximumAttempts {
            attempts += 1
            let xrunsBefore = session.xrunCount, interruptionsBefore = session.interruptionsBegun
            if !armed { recorder.arm() } else { recorder.playAgain() }
            armed = true
            _ = recorder.waitUntilComplete(timeout: timeout)
            if session.interruptionsBegun != interruptionsBefore || session.isInterrupted {
                // Silenced by another session: not this path's figure. Paused until the session is active
                // again (as long as the interruption lasts), then the run is finished and played again.
                attempts -= 1
                watch.waitUntilResumed()
                guard recorder.waitUntilComplete(timeout: timeout) else {
                    return (attempts + 1, "the server ran no cycles for \(Int(timeout)) s after the interruption")
                }
                continue
            }
            let xruns = session.xrunCount - xrunsBefore
            // Not complete: the real-time side owns the run until it is; it is not played again.
            guard recorder.isComplete else { return (attempts, "the server ran no cycles for \(Int(timeout)) s") }
            if xruns == 0 {
                guard let dropout = dropout(in: recorder, stimulus: stimulus, period: session.ioBufferFrames, sampleRate: sampleRate) else {
                    return (attempts, nil)
                }
                problem = dropout
            } else {
                problem = "\(xruns) xrun\(xruns == 1 ? "" : "s") during the run"
            }
            if attempts < maximumAttempts { onSpoiltRun?(problem) }
        }
        return (attempts, problem)
    }

    /// What a dropout in the run's recordings was, if there was one.
    private func dropout(in recorder: RealtimeStimulusRecorder, stimulus: Stimulus, period: Int, sampleRate: Int) -> String? {
        for index in inputPorts.indices {
            let played = (stimulus.outputs?.contains(index) ?? true) ? stimulus.samples : nil
            if let frame = DropoutCheck.firstDropout(in: recorder.captured(channel: index), stimulus: played, minimumFrames: period) {
                return String(format: "a period came back as digital silence on '%@' %.3f s into the run (a dropout the server "
                              + "did not count as an xrun)", inputPorts[index], Double(frame) / Double(sampleRate))
            }
        }
        return nil
    }
}
