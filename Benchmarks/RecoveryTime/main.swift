// `make bench`: how long a measurement session takes to carry audio again
// after jackd restarts. Per restart: from the moment the new jackd accepts
// clients (the harness's probe client connects) to the first process cycle in
// which the session's input, fed through the loopback by its own output, is
// non-zero again.
//
// usage: recovery-bench [--restarts N]
import JackAudioSession
import CJack
import Foundation
import JackKit
import JackRuntime
import LoopbackHarness
import Synchronization

final class FirstSound: @unchecked Sendable {
    /// Monotonic time of the first cycle with sound since the last reset, ns (0: none yet).
    let heardAt = Atomic<UInt64>(0)

    var renderBlock: RenderBlock {
        { cycle in
            for buffer in cycle.outputs { buffer.update(repeating: 0.5, count: cycle.frameCount) }
            if self.heardAt.load(ordering: .relaxed) == 0, cycle.inputs[0][cycle.frameCount - 1] != 0 {
                self.heardAt.store(cjack_monotonic_nanoseconds(), ordering: .releasing)
            }
        }
    }
}

LibraryMessages.silence()
var restarts = 20
if let index = CommandLine.arguments.firstIndex(of: "--restarts"), index + 1 < CommandLine.arguments.count {
    restarts = Int(CommandLine.arguments[index + 1]) ?? restarts
}
let name = "jas-recovery-\(getpid())"
var server = try LoopbackServer(name: name, period: 256)
let sound = FirstSound()
let session = AudioSession(clientName: "recovering", serverName: name, recordConsent: .givenByCaller)
try session.setCategory(.playAndRecord, mode: .measurement)
try session.setPreferredInputNumberOfChannels(1)
try session.setPreferredOutputNumberOfChannels(1)
session.setPreferredInputPortNames(["loopback:capture_1"])
session.setPreferredOutputPortNames(["loopback:playback_1"])
session.setRenderBlock(sound.renderBlock)
try session.setActive(true)

var recoveries: [Double] = []
for round in 1...restarts {
    server.stop()
    while session.isActive { usleep(1_000) }
    sound.heardAt.store(0, ordering: .releasing)
    server = try LoopbackServer(name: name, period: 256)
    let acceptedAt = cjack_monotonic_nanoseconds()
    let deadline = Date().addingTimeInterval(10)
    while sound.heardAt.load(ordering: .acquiring) == 0 && Date() < deadline { usleep(1_000) }
    let heard = sound.heardAt.load(ordering: .acquiring)
    guard heard != 0 else { fatalError("round \(round): no sound within 10 s of the server's return") }
    // The session can be back before the probe's own connect returns: that counts as 0.
    recoveries.append(heard > acceptedAt ? Double(heard - acceptedAt) / 1e6 : 0)
}
session.close()
server.stop()
let sorted = recoveries.sorted()
print(String(format: "recovery over %d restarts (ms): median %.1f, max %.1f, min %.1f", restarts,
             sorted[sorted.count / 2], sorted.last!, sorted.first!))
