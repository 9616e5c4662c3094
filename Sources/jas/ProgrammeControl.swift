import Foundation
import Metering
import Synchronization

/// Reset, pause and resume of the programme's loudness while `jas meter`
/// runs: from SIGUSR1 (reset) and from lines on stdin (`reset`, `pause`,
/// `resume`); each is shown as an event and written to the --log.
final class ProgrammeControl: Sendable {
    let meter: LiveMeter
    let display: MeterDisplay
    let log: LoudnessLog?
    /// Seconds of audio metered at the last reading (where a command lands).
    let lastSeconds = Mutex(0.0)

    init(meter: LiveMeter, display: MeterDisplay, log: LoudnessLog?) {
        self.meter = meter
        self.display = display
        self.log = log
    }

    func perform(_ command: String) {
        let event: MeterEvent.ProgrammeChange
        switch command.trimmingCharacters(in: .whitespaces).lowercased() {
        case "reset":
            meter.resetProgramme()
            event = .reset
        case "pause":
            meter.setProgrammePaused(true)
            event = .paused
        case "resume":
            meter.setProgrammePaused(false)
            event = .resumed
        case "":
            return
        default:
            display.warn("unknown command '\(command)' on stdin: reset, pause or resume")
            return
        }
        let seconds = lastSeconds.withLock { $0 }
        display.programme(event, seconds: seconds)
        log?.note(event, seconds: seconds)
    }

    /// Reads commands from stdin until it ends (at once when it is /dev/null).
    func readCommands() {
        Thread.detachNewThread { [self] in
            while let line = readLine() { perform(line) }
        }
    }
}
