import Foundation
import JackTestSupport
import Synchronization
import XCTest

/// `jas record` under systemd (`Type=notify`): READY=1 once the first file
/// is open, WATCHDOG=1 while the disk thread moves, none while a write is
/// stuck (a FIFO nobody reads), and again once it moves; checked on a
/// socket the test listens on, as systemd does.
final class RecordServiceTests: JackTestCase {
    /// A unix datagram socket, as systemd's notify socket, with what arrived and when.
    private final class NotifySocket: @unchecked Sendable { // `messages` is behind its mutex
        let path: String
        private let descriptor: Int32
        let messages = Mutex<[(at: Date, fields: [String])]>([])

        init() throws {
            path = NSTemporaryDirectory() + "notify-\(UUID().uuidString.prefix(8))"
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0 else { throw NSError(domain: "NotifySocket", code: Int(errno)) }
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            Thread { [self] in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = recv(descriptor, &buffer, buffer.count, 0)
                    if count > 0 {
                        let fields = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").map(String.init)
                        messages.withLock { $0.append((Date(), fields)) }
                    } else if count < 0 && errno != EAGAIN && errno != EINTR {
                        return
                    }
                }
            }.start()
        }

        func close() {
            shutdown(descriptor, Int32(SHUT_RDWR))
            Glibc.close(descriptor)
            unlink(path)
        }

        func times(of field: String) -> [Date] { messages.withLock { $0.filter { $0.fields.contains(field) }.map(\.at) } }
    }

    func testReadyAndAWatchdogThatStopsWhileAWriteIsStuck() throws {
        let server = try startServer(period: 256)
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 3)
        defer { sender.session.close() }
        let notify = try NotifySocket()
        defer { notify.close() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The take goes to a FIFO the test reads, until it stops reading.
        let fifo = "\(folder)/take.flac"
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        let reading = open(fifo, O_RDONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(reading, 0)
        defer { close(reading) }
        // Reading: nil (the test is over), or whether to read now.
        let reader = Mutex<Bool?>(true)
        defer { reader.withLock { $0 = nil } }
        Thread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while let reads = reader.withLock({ $0 }) {
                // Before jas opens the FIFO, and after, a read may find nothing (0 or EAGAIN).
                if reads { _ = read(reading, &buffer, buffer.count) }
                usleep(5_000)
            }
        }.start()
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "signal-sender:out_*", "--output", fifo, "--for", "60"],
            environment: ["NOTIFY_SOCKET": notify.path])
        defer { kill(recorder.process.processIdentifier, SIGTERM) }
        XCTAssertTrue(waitUntil(timeout: 10) { !notify.times(of: "READY=1").isEmpty }, recorder.stderr)
        XCTAssertNotNil(recorder.event("recording"), "READY before the file was open")
        XCTAssertTrue(waitUntil(timeout: 10) { notify.times(of: "WATCHDOG=1").count >= 3 }, "no watchdog pings while writing")
        XCTAssertTrue(notify.messages.withLock { $0.contains { $0.fields.contains { $0.hasPrefix("STATUS=recording take.flac") } } })

        // Nobody reads: the pipe fills, the disk thread's write blocks, the pings stop.
        reader.withLock { $0 = false }
        let stoppedReading = Date()
        XCTAssertTrue(waitUntil(timeout: 20) {
            let last = notify.times(of: "WATCHDOG=1").last ?? .distantPast
            return Date().timeIntervalSince(last) >= 4 && last > stoppedReading
        }, "the watchdog kept being pinged while the writer was stuck")
        XCTAssertTrue(recorder.process.isRunning, recorder.stderr)
        // Reading again: the writer moves, and so do the pings.
        let resumed = Date()
        reader.withLock { $0 = true }
        XCTAssertTrue(waitUntil(timeout: 10) { (notify.times(of: "WATCHDOG=1").last ?? .distantPast) > resumed },
                      "no ping once the writer moved again")
    }

    /// The wall clock stepped back an hour in the middle of a take (NTP's
    /// correction, a person setting the time, an RTC read at boot): the
    /// watchdog is still pinged every second and the file's header still
    /// follows what is written, as the monotonic clock paces both. Timed on
    /// the wall clock, each stopped for the hour: systemd (`WatchdogSec=`)
    /// would have killed the logger, and a crash meanwhile would have left
    /// a header saying less than the file holds.
    func testAWallClockSteppedBackHoldsNeitherTheWatchdogNorTheHeader() throws {
        let server = try startServer(period: 256)
        let sender = try SignalSender(serverName: server.name, channels: 2, seed: 4)
        defer { sender.session.close() }
        let notify = try NotifySocket()
        defer { notify.close() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let step = "\(folder)/wall-clock-step"
        try "0".write(toFile: step, atomically: true, encoding: .utf8)
        let take = "\(folder)/take.wav"
        let recorder = try RecordProcess(jas: jas, arguments: [
            "--server", server.name, "--ports", "signal-sender:out_*", "--output", take, "--for", "60"],
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "2000000",
                          "LD_PRELOAD": try HookLibrary.steppedWallClock.path(), "WALL_CLOCK_STEP_FILE": step])
        defer { kill(recorder.process.processIdentifier, SIGTERM) }
        XCTAssertTrue(waitUntil(timeout: 10) { notify.times(of: "WATCHDOG=1").count >= 2 }, recorder.stderr)

        try "-3600".write(toFile: step, atomically: true, encoding: .utf8)
        let stepped = Date()
        // The header as it is once the recorder has seen the step (it logs it).
        XCTAssertTrue(waitUntil(timeout: 10) { recorder.event("clock_step") != nil }, "the step was not seen: \(recorder.stderr)")
        let sizeAfterStep = try riffSize(of: take)
        XCTAssertTrue(waitUntil(timeout: 10) { notify.times(of: "WATCHDOG=1").filter { $0 > stepped }.count >= 3 },
                      "the watchdog stopped being pinged when the wall clock stepped back: "
                      + "\(notify.times(of: "WATCHDOG=1").filter { $0 > stepped }.count) pings since; \(recorder.stderr)")
        XCTAssertTrue(waitUntil(timeout: 10) { ((try? self.riffSize(of: take)) ?? 0) > sizeAfterStep + 96_000 },
                      "the header stopped following the file when the wall clock stepped back: RIFF size "
                      + "\((try? riffSize(of: take)) ?? 0) against \(sizeAfterStep) at the step")
        XCTAssertTrue(recorder.process.isRunning, recorder.stderr)
    }

    /// The RIFF chunk's size as the file's header says it now (libsndfile
    /// writes it when the recorder updates the header).
    private func riffSize(of path: String) throws -> UInt32 {
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: path))
        defer { try? handle.close() }
        let head = try XCTUnwrap(try handle.read(upToCount: 8))
        XCTAssertEqual(head.count, 8)
        return head.dropFirst(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}
