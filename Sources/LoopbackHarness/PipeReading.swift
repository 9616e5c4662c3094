import Foundation

/// Reads `pipe` to its end on a thread of its own, with blocking reads,
/// handing each piece to `deliver` and then an empty `Data` for the end.
/// FileHandle's readabilityHandler (swift-corelibs-foundation), used before,
/// often never reported the end of a pipe whose writer had exited: 119 of 300
/// quick runs of `/bin/sh` (`ToolOutputEndTests`), and in one run of
/// `OptionFuzzTests` 4 of 152 usage errors that ended in 50 ms were waited
/// for until the 15 s timeout (94 s for the class; 12 s now). And a process
/// whose children's pipes it read so (restart-soak) crashed in libdispatch's
/// event loop (`_dispatch_event_loop_drain`, a bad pointer) in about one run
/// in three: the handler's dispatch source outliving its descriptor is the
/// likely cause. Tests and benchmarks read pipes with this only.
public func readToEnd(_ pipe: Pipe, _ deliver: @escaping @Sendable (Data) -> Void) {
    let handle = pipe.fileHandleForReading   // kept open by the thread until the end
    let thread = Thread {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            deliver(Data(buffer[0..<count]))
        }
        deliver(Data())
    }
    thread.name = "pipe-reader"
    thread.start()
}
