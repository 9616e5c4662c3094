import ArgumentParser
import JackAudioSession

/// One `--route NAME=DEST` of `jas play`.
struct StreamRoute {
    let name: String
    /// A device uid, with channel numbers or not, or JACK port names.
    enum Destination {
        case device(String, channels: [Int]?)
        case ports([String])
    }
    let destination: Destination

    init(parsing text: String) throws {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw ValidationError("--route '\(text)' must be NAME=DEST, e.g. cue=headphones or tv=hdmi:1,2")
        }
        name = parts[0]
        let target = parts[1]
        if let colon = target.lastIndex(of: ":") {
            let numbers = target[target.index(after: colon)...].split(separator: ",").map { Int($0) }
            if !numbers.isEmpty, numbers.allSatisfy({ $0 != nil }) {
                destination = .device(String(target[..<colon]), channels: numbers.compactMap { $0 })
                return
            }
            destination = .ports(target.split(separator: ",").map(String.init))
        } else {
            destination = .device(target, channels: nil)
        }
    }

    /// Makes the stream in `session` (multiRoute).
    func makeStream(in session: AudioSession) throws(AudioSessionError) -> AudioOutputStream {
        switch destination {
        case let .ports(ports):
            return try session.outputStream(named: name, toPorts: ports)
        case let .device(uid, channels):
            let outputs = try session.outputDevices()
            guard let device = outputs.first(where: { $0.uid == uid }) else {
                throw AudioSessionError(.badParam, "--route \(name): no output device '\(uid)' on server '\(session.serverName)' "
                                            + "(there are " + outputs.map(\.uid).joined(separator: ", ") + ")")
            }
            return try session.outputStream(named: name, to: device, channels: channels)
        }
    }
}
