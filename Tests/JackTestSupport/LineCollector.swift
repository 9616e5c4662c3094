import Foundation
import LoopbackHarness

/// Reads JSON Lines from a pipe as they arrive.
public final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = Data()
    private var parsed: [[String: Any]] = []
    private var ended = false

    /// Starts reading `pipe`.
    public init(_ pipe: Pipe) {
        readToEnd(pipe) { [weak self] data in self?.append(data) }
    }

    private func append(_ data: Data) {
        lock.lock()
        defer { lock.unlock() }
        if data.isEmpty { ended = true }
        buffer.append(data)
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = buffer[buffer.startIndex..<newline]
            buffer.removeSubrange(buffer.startIndex...newline)
            if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] { parsed.append(object) }
        }
    }

    /// Every object read so far, in order.
    public var objects: [[String: Any]] {
        lock.lock()
        defer { lock.unlock() }
        return parsed
    }

    /// Whether the pipe reached its end: every line the writer wrote is in `objects`.
    public var isAtEnd: Bool {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }

    /// Waits until the pipe reached its end (false after `timeout` seconds).
    @discardableResult
    public func waitForEnd(timeout: Double = 15) -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while !isAtEnd {
            if ContinuousClock.now > deadline { return false }
            usleep(10_000)
        }
        return true
    }

    /// Collects a pipe's plain text as it arrives (a process's stderr).
    public final class Text: @unchecked Sendable {
        private let lock = NSLock()
        private var collected = ""
        private var ended = false

        public init() {}

        /// Starts reading `pipe`.
        public func read(_ pipe: Pipe) {
            readToEnd(pipe) { [weak self] data in
                let text = String(decoding: data, as: UTF8.self)
                self?.lock.withLock {
                    self?.collected += text
                    if data.isEmpty { self?.ended = true }
                }
            }
        }

        /// Everything read so far.
        public var text: String { lock.withLock { collected } }

        /// Waits until the writer closed its end (every byte is in `text`); false after `timeout` seconds.
        @discardableResult
        public func waitForEnd(timeout: Double = 15) -> Bool {
            let deadline = ContinuousClock.now + .seconds(timeout)
            while !lock.withLock({ ended }) {
                if ContinuousClock.now > deadline { return false }
                usleep(10_000)
            }
            return true
        }
    }
}

/// The JSON objects of a program's whole output, one per line (lines that are not one are skipped).
public func jsonLines(_ output: String) -> [[String: Any]] {
    output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
}
