import JackKit

/// What libjack's notifications become once they reach the queue.
extension SessionCore {
    /// Whether `sender` is the session's client now (a message from an older one is dropped).
    func isCurrent(_ sender: ObjectIdentifier) -> Bool {
        activation.client.map(ObjectIdentifier.init) == sender
    }

    /// Posts the xruns not yet reported as one event (at most four a second).
    func reportXruns() {
        let total = board.xruns.load(ordering: .relaxed)
        let reported = xrunsReported
        xrunsReported = total
        guard total > reported else { return }
        let delay = activeClient?.xrunDelayMicroseconds ?? 0
        let first = board.firstUnreportedXrunFrame.exchange(0, ordering: .acquiringAndReleasing)
        hub.post(.xrun(count: total - reported, total: total, delayMicroseconds: delay,
                       atFrameTime: first == 0 ? nil : UInt32(truncatingIfNeeded: first)))
    }

    /// The server runs another period now.
    func periodChanged(to frames: Int, from sender: ObjectIdentifier) {
        guard isCurrent(sender), let client = openClient else { return }
        hub.post(.ioBufferDurationChange(seconds: Double(frames) / Double(client.sampleRate), frames: frames))
    }

    /// Runs the arbitration soon, once for a burst of requests.
    func scheduleArbitration() {
        session?.scheduleArbitration()
    }
}
