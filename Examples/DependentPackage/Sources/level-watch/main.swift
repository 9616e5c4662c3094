// level-watch SERVER PORT...: the loudness of JACK ports, once a second,
// through JackAudioSession's Metering library (what `jas meter` does, in a
// dozen lines of another package).
import JackAudioSession
import Foundation
import Metering

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else {
    print("usage: level-watch SERVER PORT...")
    exit(2)
}
var configuration = LiveMeter.Configuration()
configuration.serverName = arguments[0]
configuration.portPatterns = Array(arguments.dropFirst())
configuration.interval = 1
let meter = LiveMeter(configuration: configuration)
try meter.start { reading in
    print(reading.momentaryLUFS.map { String(format: "%.1f LUFS momentary", $0) } ?? "silence")
}
while true { sleep(60) }
