import JackAudioSession
import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import Measurement
import Recording
import Synchronization
import XCTest

/// A measurement-mode playback session that sends a seeded `TestSignal` into
/// the loopback (channel c to `loopback:playback_{c+1}`), each sample a pure
/// function of its JACK frame time, so a recording of `loopback:capture_*`
/// can be checked sample for sample. A session, so it survives a server
/// restart as any app would. Silent before `onsetFrame`, when one is set.
final class SignalSender: @unchecked Sendable {
    let source: SentSignal
    let channels: Int
    let session: AudioSession

    init(serverName: String, channels: Int, seed: UInt64 = 42, onTwentyFourBitGrid: Bool = false) throws {
        let source = SentSignal(signal: TestSignal(seed: seed), onTwentyFourBitGrid: onTwentyFourBitGrid)
        self.source = source
        self.channels = channels
        session = AudioSession(clientName: "signal-sender", serverName: serverName, recordConsent: .givenByCaller)
        try session.setCategory(.playback, mode: .measurement)
        try session.setPreferredOutputNumberOfChannels(channels)
        session.setPreferredOutputPortNames((1...channels).map { "loopback:playback_\($0)" })
        session.setRenderBlock { cycle in source.render(cycle) }
        try session.setActive(true)
    }

    deinit { session.close() }

    /// Silence before JACK frame time `frame`, the signal from it on.
    func setOnset(_ frame: UInt32) { source.onset.store(Int64(frame) + 1, ordering: .relaxed) }

    /// The sample sent on `channel` at JACK frame time `frame`.
    func sample(channel: Int, frame: UInt32) -> Float {
        source.sample(channel: channel, frame: frame, onset: source.onset.load(ordering: .relaxed))
    }

    typealias Comparison = SentSignal.Comparison

    /// `SentSignal.compare` with what this sender sent.
    func compare(_ samples: [Float], channels recorded: Int, firstFrameTime: UInt32, period: Int,
                 gaps: [(at: Int, frames: Int)] = []) -> Comparison {
        source.compare(samples, channels: recorded, firstFrameTime: firstFrameTime, period: period, gaps: gaps)
    }
}
