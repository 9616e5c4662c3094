import AudioSession
import Foundation

/// How `jas` prints session events: one JSON object per line (snake_case
/// keys like every `--json` stream; the event and reason values keep
/// AVAudioSession's names), or a line of text.
enum EventFormat {
    static func json(_ event: AudioSessionEvent, time: Date = Date()) -> String {
        var object: [String: Any] = ["time": time.timeIntervalSince1970]
        switch event {
        case let .interruption(type, options, reason):
            object["event"] = "interruption"
            object["type"] = type.name
            object["options"] = options.contains(.shouldResume) ? ["shouldResume"] : []
            object["reason"] = reason.rawValue
        case let .routeChange(reason, previous, current, streams):
            object["event"] = "routeChange"
            object["reason"] = reason.name
            object["streams"] = streams
            object["previous_route"] = route(previous)
            object["current_route"] = route(current)
        case let .mediaServicesWereLost(reason):
            object["event"] = "mediaServicesWereLost"
            object["reason"] = reason
        case let .mediaServicesWereReset(reset):
            object["event"] = "mediaServicesWereReset"
            object["downtime_seconds"] = reset.downtime
            object["sample_rate"] = reset.sampleRate
            object["previous_sample_rate"] = reset.previousSampleRate
            object["io_buffer_frames"] = reset.ioBufferFrames
            object["previous_io_buffer_frames"] = reset.previousIOBufferFrames
            object["reactivated"] = reset.reactivated
        case let .silenceSecondaryAudioHint(begin):
            object["event"] = "silenceSecondaryAudioHint"
            object["type"] = begin ? "begin" : "end"
        case let .xrun(count, total, delay):
            object["event"] = "xrun"
            object["count"] = count
            object["total"] = total
            object["delay_microseconds"] = delay
        case let .ioBufferDurationChange(seconds, frames):
            object["event"] = "ioBufferDurationChange"
            object["seconds"] = seconds
            object["frames"] = frames
        case let .serverLimitation(limitation):
            object["event"] = "serverLimitation"
            object["missing"] = limitation.missing
            object["consequence"] = limitation.consequence
            object["remedy"] = limitation.remedy
        case let .sampleRateMismatch(mismatch):
            object["event"] = "sampleRateMismatch"
            object["preferred_sample_rate"] = mismatch.preferredSampleRate
            object["sample_rate"] = mismatch.sampleRate
        }
        return line(object)
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
        case let .xrun(count, total, delay):
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

    static func route(_ route: RouteDescription) -> [String: Any] {
        ["inputs": route.inputs.map(port), "outputs": route.outputs.map(port)]
    }

    static func port(_ port: PortDescription) -> [String: Any] {
        ["port_name": port.portName, "port_type": port.portType.rawValue, "uid": port.uid,
         "channels": port.channels.map { ["channel_name": $0.channelName, "channel_number": $0.channelNumber,
                                          "jack_port": $0.jackPort] }]
    }

    static func describe(_ route: RouteDescription) -> String {
        let inputs = route.inputs.map { "\($0.portName) [\($0.portType.rawValue)]" }
        let outputs = route.outputs.map { "\($0.portName) [\($0.portType.rawValue)]" }
        if inputs.isEmpty && outputs.isEmpty { return "(none)" }
        return [inputs.isEmpty ? nil : "in: " + inputs.joined(separator: ", "),
                outputs.isEmpty ? nil : "out: " + outputs.joined(separator: ", ")].compactMap { $0 }.joined(separator: "; ")
    }

    static func line(_ object: [String: Any]) -> String {
        Output.jsonText(object)
    }

    static func timestamp(_ time: Date) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter.string(from: time)
    }
}
