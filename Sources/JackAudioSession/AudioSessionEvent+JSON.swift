import EventSchema

/// A session event as a line of `--json` and the watch stream: `event` is
/// the notification's name as AVAudioSession spells it, as are the type and
/// reason values; the other keys are snake_case.
extension AudioSessionEvent: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        switch self {
        case let .interruption(type, options, reason):
            try json.encode("interruption", forKey: "event")
            try json.encode(type.name, forKey: "type")
            try json.encode(options.contains(.shouldResume) ? ["shouldResume"] : [], forKey: "options")
            try json.encode(reason.rawValue, forKey: "reason")
        case let .routeChange(reason, previous, current, streams):
            try json.encode("routeChange", forKey: "event")
            try json.encode(reason.name, forKey: "reason")
            try json.encode(streams, forKey: "streams")
            try json.encode(RouteJSON(previous), forKey: "previous_route")
            try json.encode(RouteJSON(current), forKey: "current_route")
        case let .mediaServicesWereLost(reason):
            try json.encode("mediaServicesWereLost", forKey: "event")
            try json.encode(reason, forKey: "reason")
        case let .mediaServicesWereReset(reset):
            try json.encode("mediaServicesWereReset", forKey: "event")
            try json.encode(reset.downtime, forKey: "downtime_seconds")
            try json.encode(reset.sampleRate, forKey: "sample_rate")
            try json.encode(reset.previousSampleRate, forKey: "previous_sample_rate")
            try json.encode(reset.ioBufferFrames, forKey: "io_buffer_frames")
            try json.encode(reset.previousIOBufferFrames, forKey: "previous_io_buffer_frames")
            try json.encode(reset.reactivated, forKey: "reactivated")
        case let .silenceSecondaryAudioHint(begin):
            try json.encode("silenceSecondaryAudioHint", forKey: "event")
            try json.encode(begin ? "begin" : "end", forKey: "type")
        case let .xrun(count, total, delay, _):
            try json.encode("xrun", forKey: "event")
            try json.encode(count, forKey: "count")
            try json.encode(total, forKey: "total")
            try json.encode(delay, forKey: "delay_microseconds")
        case let .ioBufferDurationChange(seconds, frames):
            try json.encode("ioBufferDurationChange", forKey: "event")
            try json.encode(seconds, forKey: "seconds")
            try json.encode(frames, forKey: "frames")
        case let .serverLimitation(limitation):
            try json.encode("serverLimitation", forKey: "event")
            try json.encode(limitation.missing, forKey: "missing")
            try json.encode(limitation.consequence, forKey: "consequence")
            try json.encode(limitation.remedy, forKey: "remedy")
        case let .sampleRateMismatch(mismatch):
            try json.encode("sampleRateMismatch", forKey: "event")
            try json.encode(mismatch.preferredSampleRate, forKey: "preferred_sample_rate")
            try json.encode(mismatch.sampleRate, forKey: "sample_rate")
        }
    }
}

/// A route as an event carries it: the devices and their channels, without
/// the data sources (`jas status` lists those).
private struct RouteJSON: Encodable {
    let route: RouteDescription

    init(_ route: RouteDescription) { self.route = route }

    func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(route.inputs.map(PortJSON.init), forKey: "inputs")
        try json.encode(route.outputs.map(PortJSON.init), forKey: "outputs")
    }
}

private struct PortJSON: Encodable {
    let port: PortDescription

    func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(port.portName, forKey: "port_name")
        try json.encode(port.portType.rawValue, forKey: "port_type")
        try json.encode(port.uid, forKey: "uid")
        try json.encode(port.channels.map(ChannelJSON.init), forKey: "channels")
    }
}

private struct ChannelJSON: Encodable {
    let channel: ChannelDescription

    func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(channel.channelName, forKey: "channel_name")
        try json.encode(channel.channelNumber, forKey: "channel_number")
        try json.encode(channel.jackPort, forKey: "jack_port")
    }
}
