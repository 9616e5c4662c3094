import AudioSession
import Foundation
import JackKit

/// The presence of the ports a take records. When one goes away (its client
/// exits or crashes, a device is unplugged), JACK disconnects it and the take
/// hears silence: the watch says so at once (`source_lost`), and when ports
/// of the same names are back and connected again (the session reconnects
/// them), logs the silence as a gap of the time they were away, with their
/// names. A take that ends while a source is away logs the gap to its end.
/// Checks every 20 ms off the real-time path (the lookups read JACK's shared
/// graph; no request to the server).
final class SourceWatch: @unchecked Sendable {
    private let ports: [String]
    private let session: AudioSession
    private let writer: DiskWriter
    private let isServerLost: @Sendable () -> Bool
    private let emit: @Sendable (RecordingEvent) -> Void
    private let queue = DispatchQueue(label: "jas.record.sources")
    private var timer: DispatchSourceTimer?
    /// The ports away and where in the file they went (queue-confined).
    private var absence: (ports: [String], atFrame: Int64)?

    init(ports: [String], session: AudioSession, writer: DiskWriter, isServerLost: @escaping @Sendable () -> Bool,
         emit: @escaping @Sendable (RecordingEvent) -> Void) {
        self.ports = ports
        self.session = session
        self.writer = writer
        self.isServerLost = isServerLost
        self.emit = emit
    }

    func start() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 0.02, repeating: 0.02)
        timer.setEventHandler { [weak self] in self?.check() }
        timer.resume()
        queue.sync { self.timer = timer }
    }

    /// Stops watching; a source still away is logged as a gap to the end.
    func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
            guard let absence else { return }
            let end = writer.stats.withLock { $0.framesWritten }
            close(absence, at: end, frameTime: nil)
        }
    }

    private func check() {
        guard !isServerLost(), let client = session.client, !client.isClosed else { return }
        guard writer.stats.withLock({ $0.recording && !$0.finished }) else { return }
        let absent = ports.filter { client.port(named: $0) == nil }
        if let current = absence {
            if absent.isEmpty && ports.allSatisfy({ isConnected($0, to: client) }) {
                let now = client.frameTime
                close(current, at: writer.position(ofFrameTime: now), frameTime: now)
            } else if !Set(absent).isSubset(of: current.ports) {
                absence = (current.ports + absent.filter { !current.ports.contains($0) }, current.atFrame)
            }
        } else if !absent.isEmpty {
            let at = writer.position(ofFrameTime: client.frameTime)
            absence = (absent, at)
            emit(.sourceLost(ports: absent, atFrame: at))
        }
    }

    /// Whether the port feeds one of the session's inputs again.
    private func isConnected(_ port: String, to client: Client) -> Bool {
        client.port(named: port)?.connections.contains { $0.hasPrefix(client.name + ":") } ?? false
    }

    /// Logs the absence as a gap ending at file position `end` (`frameTime`
    /// nil: the take ended before the sources came back).
    private func close(_ absence: (ports: [String], atFrame: Int64), at end: Int64, frameTime: UInt32?) {
        let frames = Int(max(0, end - absence.atFrame))
        writer.stats.withLock { stats in
            stats.gaps += 1
            stats.gapFrames += Int64(frames)
        }
        emit(.sourceGap(atFrame: absence.atFrame, frames: frames, ports: absence.ports, resumedFrameTime: frameTime))
        self.absence = nil
    }
}
