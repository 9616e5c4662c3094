import EventSchema

extension AnalyzerResult {
    /// The lines' first keys: the event, and the run (server, rate, period, runs made).
    func encodeRun(_ event: String, into json: inout KeyedEncodingContainer<EventKey>) throws {
        try json.encode(event, forKey: "event")
        try json.encode(serverName, forKey: "server")
        try json.encode(sampleRate, forKey: "sample_rate")
        try json.encode(periodFrames, forKey: "period_frames")
        try json.encode(attempts, forKey: "attempts")
    }
}
