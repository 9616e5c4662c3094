#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JackKit

/// A lock of the metadata store that only an open meets.
///
/// A program killed inside the store can leave held a lock that the
/// server's jackd never takes while it runs (the environment's own mutex,
/// taken when a program opens or closes the store): nobody sleeps on it
/// until a program opens a client, so `lockLeftHeld` finds nothing, and the
/// program that opens gets libjack stuck in its own process. A probe opens
/// the store in a process made for it: libjack opens the store before it
/// looks for the server, so an open on a server that does not exist meets
/// every lock an open meets, and registers no client anywhere.
extension MetadataStore {
    /// The exit status of a probe whose open slept on a lock left held.
    public static let probeFoundLock: Int32 = 3

    /// The probe's side, in a process of its own: opens a client on a server
    /// that does not exist, through the lifecycle lane, which gives up on a
    /// lock whose holder is gone after `lockGrace`. Exits with 0 when the open
    /// returned (refused: no such server), with `probeFoundLock` and the lock
    /// on stderr when it slept on such a lock, 1 when it hung otherwise;
    /// `_exit`, as libjack's destructors would sleep on that lock too.
    public static func runOpenProbe() -> Never {
        let name = "store-probe-\(getpid())"
        do {
            _ = try Client(name: name, serverName: name)
        } catch .libraryWedged {
            // Stuck for another reason (the open's bound): not told as a lock.
            guard let lock = ClientLifecycle.shared.wedgedOnLock, lock.ownerIsGone else { _exit(1) }
            let region = (lock.region as NSString).lastPathComponent
            FileHandle.standardError.write(Data("an open sleeps on a lock in \(region)\(lock.holder)\n".utf8))
            _exit(probeFoundLock)
        } catch {
            _exit(0)
        }
        _exit(0)
    }

    /// Whether an open of the store sleeps on a lock left held, told by
    /// `command`, a program that calls `runOpenProbe` (waited for at most
    /// the open's bound and 5 s more). Nil when the store is absent (the
    /// probe would make one), when the open returned, and under PipeWire's
    /// libjack (no store).
    public func lockMetByAnOpen(probe command: [String]) -> Damage? {
        guard !LibraryVersion.isPipeWire, FileManager.default.fileExists(atPath: path), let program = command.first
        else { return nil }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: program)
        probe.arguments = Array(command.dropFirst())
        let errors = Pipe()
        probe.standardError = errors
        probe.standardOutput = FileHandle.nullDevice
        do { try probe.run() } catch { return nil }
        let deadline = ContinuousClock.now + .seconds(ClientLifecycle.openBound + 5)
        while probe.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        if probe.isRunning {
            kill(probe.processIdentifier, SIGKILL)
            probe.waitUntilExit()
            return nil
        }
        probe.waitUntilExit()
        guard probe.terminationReason == .exit, probe.terminationStatus == Self.probeFoundLock else { return nil }
        // libjack says things of its own on stderr (no such server): the lane's reason is the last line.
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let reason = said.split(separator: "\n").last.map(String.init) ?? "an open sleeps on one of its locks"
        return Damage(path: path, reason: reason, isLock: true)
    }
}
