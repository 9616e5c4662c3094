/// What the session asks the server for as its period, decided from the
/// preferred I/O buffer duration, the period the server runs and the other
/// sessions on it. No JACK: the session reads, decides here, then asks
/// (`jack_set_buffer_size`).
enum PeriodRequest: Equatable {
    /// The server runs that period already: nothing is asked.
    case running
    /// "When competing audio sessions set preferred hardware values, the
    /// system gives priority to non-mixable sessions": a mixable session does
    /// not ask while another that does not mix is active (its client's name).
    case yielded(to: String)
    /// Ask for this many frames.
    case ask(frames: Int)

    /// - Parameters:
    ///   - duration: the preferred I/O buffer duration, seconds.
    ///   - others: the sessions published on the server (read only when a
    ///     mixable session would ask).
    init(duration: Double, sampleRate: Int, runningPeriod: Int, isMixable: Bool, ownUUID: UInt64,
         others: () -> [PublishedSession]) {
        let frames = BufferDuration.periodFrames(forDuration: duration, sampleRate: sampleRate)
        if frames == runningPeriod {
            self = .running
        } else if isMixable,
                  let call = others().first(where: { $0.uuid != ownUUID && $0.state.active && !$0.state.isMixable }) {
            self = .yielded(to: call.state.client)
        } else {
            self = .ask(frames: frames)
        }
    }

    /// The frames to ask for, nil when nothing is asked.
    var frames: Int? {
        if case let .ask(frames) = self { frames } else { nil }
    }
}
