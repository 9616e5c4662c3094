// The README's example: open a measurement session and read its latency.
// Usage: measurement-example [SERVER]  (without SERVER: a private jackd)
import JackAudioSession
import Foundation
import LoopbackHarness

let arguments = CommandLine.arguments.dropFirst()
let privateServer = arguments.isEmpty ? try LoopbackServer(name: "example-\(getpid())", period: 256) : nil
defer { privateServer?.stop() }

let session = AudioSession(clientName: "example", serverName: arguments.first ?? privateServer?.name,
                           recordConsent: .givenByCaller)        // the user ran this to measure
try session.setCategory(.playAndRecord, mode: .measurement)
try session.setPreferredIOBufferDuration(0.005)          // asks JACK for 256 frames at 48 kHz
session.setRenderBlock { cycle in                        // JACK's port buffers, zero copy
    for (input, output) in zip(cycle.inputs, cycle.outputs) {
        output.update(from: input, count: cycle.frameCount)
    }
}
try session.setActive(true)
print("sample rate    \(session.sampleRate) Hz")
print("I/O buffer     \(session.ioBufferDuration * 1000) ms (\(session.ioBufferFrames) frames)")
print("input latency  \(session.inputLatency * 1000) ms")
print("output latency \(session.outputLatency * 1000) ms")
try session.setActive(false)
session.close()
