import Capture
import Foundation
import JackKit
import Synchronization

/// The thread that drains one capture's ring, waiting as a reader does
/// today (woken by the callback through `ReaderWakeup`, every cycle as the
/// live meter or every 20 ms of frames as the disk writer) or as both did
/// before issue 36 (looking at the ring every 5 ms). For each cycle it takes
/// off the ring: how long after the cycle's capture (its header's monotonic
/// time) the reader had it. And how often the thread woke, and its CPU.
final class ReaderWakeupProbe: @unchecked Sendable { // `delays`, `wakeups` and `cpuSeconds` are the reader thread's until `stop` returns
    enum Wait {
        case woken
        case polling(milliseconds: Int)
    }

    let capture: RealtimeCapture
    private let wait: Wait
    private let skipped: Int
    private let kept: Int
    private let stopping = Atomic<Bool>(false)
    /// Cycles handled so far, the skipped ones included (read by the benchmark while the reader runs).
    let handled = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)
    private(set) var delays: [UInt64] = []
    private(set) var wakeups = 0
    private(set) var seconds = 0.0
    private(set) var cpuSeconds = 0.0

    /// A reader of `channels` channels keeping the delays of `cycles` cycles after the first `skipped`.
    init(channels: Int, sampleRate: Int, wakeEvery frames: Int, wait: Wait, cycles: Int, skipped: Int) {
        self.wait = wait
        self.skipped = skipped
        kept = cycles
        capture = RealtimeCapture(channels: channels, ringSeconds: 2, sampleRate: sampleRate, wakeReaderEvery: frames)
        delays.reserveCapacity(cycles)
    }

    func start() {
        Thread { [self] in run() }.start()
    }

    /// Ends the reader and returns once its figures are final.
    func stop() {
        stopping.store(true, ordering: .releasing)
        capture.wakeup.wakeNow()
        done.wait()
    }

    private func run() {
        let reader = CaptureReader(capture)
        let cpuBefore = Self.threadCPUSeconds()
        let before = MonotonicClock.nanoseconds
        while !stopping.load(ordering: .acquiring) {
            switch wait {
            case .woken: capture.wakeup.wait(timeout: 1)
            case let .polling(milliseconds): usleep(UInt32(milliseconds * 1000))
            }
            wakeups += 1
            reader.drain { header, _ in
                let now = MonotonicClock.nanoseconds
                if handled.add(1, ordering: .relaxed).newValue > skipped, delays.count < kept {
                    delays.append(now &- header.nanoseconds)
                }
            }
        }
        seconds = Double(MonotonicClock.nanoseconds - before) / 1e9
        cpuSeconds = Self.threadCPUSeconds() - cpuBefore
        done.signal()
    }

    private static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
