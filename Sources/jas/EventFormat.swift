import JackAudioSession
import EventSchema
import Foundation

/// How `jas` prints session events: one JSON object per line (the event's
/// schema, `AudioSessionEvent+JSON` in AudioSession), or a line of text.
enum EventFormat {
    static func json(_ event: AudioSessionEvent, time: Date = Date()) -> String {
        EventEncoding.line(event, at: time)
    }

    static func text(_ event: AudioSessionEvent, time: Date = Date()) -> String {
        let stamp = timestamp(time)
        switch event {
        case let .interruption(type, options, reason):
            return "\(stamp) interruption \(type.name) (\(reason.rawValue))\(options.contains(.shouldResume) ? ", should resume" : "")"
        case let .routeChange(reason, previous, current, streams):
            return "\(stamp) route change: \(reason.name): \(describe(previous)) → \(describe(current))"
                + (streams.isEmpty ? "" : "; streams \(streams.joined(separator: ", "))")
        case let .mediaServicesWereLost(reason):
            return "\(stamp) media services lost: \(reason)"
        case let .mediaServicesWereReset(reset):
            var changes: [String] = []
            if reset.sampleRate != reset.previousSampleRate { changes.append("rate \(Int(reset.previousSampleRate)) → \(Int(reset.sampleRate)) Hz") }
            if reset.ioBufferFrames != reset.previousIOBufferFrames { changes.append("period \(reset.previousIOBufferFrames) → \(reset.ioBufferFrames) frames") }
            return "\(stamp) media services reset after \(String(format: "%.3f", reset.downtime)) s"
                + (reset.reactivated ? ", active again" : "") + (changes.isEmpty ? "" : "; " + changes.joined(separator: ", "))
        case let .silenceSecondaryAudioHint(begin):
            return "\(stamp) silence secondary audio: \(begin ? "begin" : "end")"
        case let .xrun(count, total, delay, _):
            return "\(stamp) xrun ×\(count) (\(total) in all, last \(String(format: "%.0f", delay)) µs late)"
        case let .ioBufferDurationChange(seconds, frames):
            return "\(stamp) I/O buffer now \(frames) frames (\(String(format: "%.3f", seconds * 1000)) ms)"
        case let .serverLimitation(limitation):
            return "\(stamp) server limitation: \(limitation)"
        case let .sampleRateMismatch(mismatch):
            return "\(stamp) the server runs at \(Int(mismatch.sampleRate)) Hz, not the preferred "
                + "\(Int(mismatch.preferredSampleRate)) Hz (a running JACK server keeps its rate)"
        }
    }

    static func describe(_ route: RouteDescription) -> String {
        let inputs = route.inputs.map { "\($0.portName) [\($0.portType.rawValue)]" }
        let outputs = route.outputs.map { "\($0.portName) [\($0.portType.rawValue)]" }
        if inputs.isEmpty && outputs.isEmpty { return "(none)" }
        return [inputs.isEmpty ? nil : "in: " + inputs.joined(separator: ", "),
                outputs.isEmpty ? nil : "out: " + outputs.joined(separator: ", ")].compactMap { $0 }.joined(separator: "; ")
    }

    static func timestamp(_ time: Date) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter.string(from: time)
    }
}
