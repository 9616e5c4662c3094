import JackAudioSession

extension AudioSession {
    /// Sets the session up for a measurement on a path: playAndRecord in
    /// measurement mode (the bit-exact direct path), one channel per port,
    /// its outputs connected to `outputPorts` and its inputs to `inputPorts`,
    /// in order. Not activated.
    func prepareMeasurement(outputPorts: [String], inputPorts: [String]) throws(AudioSessionError) {
        try setCategory(.playAndRecord, mode: .measurement)
        try setPreferredInputNumberOfChannels(inputPorts.count)
        try setPreferredOutputNumberOfChannels(outputPorts.count)
        setPreferredInputPortNames(inputPorts)
        setPreferredOutputPortNames(outputPorts)
    }
}
