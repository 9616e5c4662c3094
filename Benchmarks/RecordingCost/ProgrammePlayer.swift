import Foundation
import JackAudioSession
import JackRuntime

/// What the recorders record when the benchmark is not of silence: every
/// loopback playback port gets noise whose level changes every 400 ms, by a
/// random amount between −40 and −6 dBFS, each channel on its own (a studio's
/// programme is loud in moments, not at every instant: a file's true peak is
/// reached now and then, not in every cycle). Rendered in this process, so
/// its CPU counts for none of the recorders.
final class ProgrammePlayer {
    let session: AudioSession

    /// The signal's state, the real-time thread's alone once playing.
    private final class State: @unchecked Sendable {
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        var framesLeft = 0
        var levels = [Float](repeating: 0, count: 256)
    }

    init(serverName: String, channels: Int, sampleRate: Int) throws {
        session = AudioSession(clientName: "bench-programme", serverName: serverName, recordConsent: .givenByCaller)
        try session.setCategory(.playback, mode: .measurement)
        try session.setPreferredOutputNumberOfChannels(channels)
        session.setPreferredOutputPortNames((1...channels).map { "loopback:playback_\($0)" })
        let hold = sampleRate * 2 / 5
        let state = State()
        session.setRenderBlock { cycle in ProgrammePlayer.render(cycle, state: state, hold: hold) }
        try session.setActive(true)
    }

    deinit { session.close() }

    private static func render(_ cycle: ProcessCycle, state: State, hold: Int) {
        func next(_ random: inout UInt64) -> Float {
            random ^= random << 13
            random ^= random >> 7
            random ^= random << 17
            return Float(random >> 40) / Float(1 << 24)
        }
        let channels = min(cycle.outputs.count, state.levels.count)
        if state.framesLeft <= 0 {
            for channel in 0..<channels {
                let dB = -40 + 34 * next(&state.random)
                state.levels[channel] = Float(exp(Double(dB) / 20 * 2.302585092994046))
            }
            state.framesLeft = hold
        }
        state.framesLeft -= cycle.frameCount
        for channel in 0..<channels {
            let level = state.levels[channel]
            let output = cycle.outputs[channel]
            for frame in 0..<cycle.frameCount {
                output[frame] = level * (2 * next(&state.random) - 1)
            }
        }
    }
}
