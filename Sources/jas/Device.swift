import ArgumentParser
import AudioSession
import Foundation
import JackKit
import LoopbackHarness

/// `jas device plug|unplug`: simulated devices for route-change tests.
struct Device: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Plug or unplug a simulated device (a JACK client with physical ports and a port type).",
        subcommands: [Plug.self, Unplug.self]
    )

    /// Where a plugged device's process keeps its PID, locked for as long as
    /// it runs: one file per server and device, in a folder private to the
    /// user (next to the session registry), names escaped so that none
    /// climbs out of it.
    static func pidFile(server: String, device: String) throws -> String {
        let registry = SessionRegistry(serverName: server)
        do {
            try registry.prepare()
        } catch {
            throw ValidationError("\(Output.reason(error))")
        }
        let folder = registry.base + "/devices-" + SessionRegistry.folderName(forServer: server)
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw ValidationError("cannot create \(folder): \(String(cString: strerror(errno)))")
        }
        return folder + "/" + SessionRegistry.folderName(forServer: device) + ".pid"
    }

    /// A device name is a JACK client name of a device: refused before anything starts when it cannot be one.
    static func checkName(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= 63, !name.contains(":"), !name.contains("/"),
              name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw ValidationError("the device name '\(Output.safe(name))' cannot be a JACK client name: use 1 to 63 "
                                  + "bytes without ':', '/' or control characters")
        }
    }

    struct Plug: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Plug a device in; it stays plugged while this command runs (Ctrl-C or `jas device unplug` ends it)."
        )

        @Argument(help: "The device name: its JACK client name and route uid.")
        var name: String

        @OptionGroup var server: ServerOption

        @Option(help: "The device's port type.")
        var type: AudioSessionPort = .headphones

        @Option(help: "Channels in each direction.")
        var channels: Int = 2

        @Option(help: "A readable name for the device.")
        var prettyName: String?

        func validate() throws {
            try Device.checkName(name)
            guard (1...64).contains(channels) else { throw ValidationError("--channels must be 1…64") }
        }

        func run() throws {
            let serverName = server.resolvedName
            // Claimed before the device exists: a second plug of the same
            // name is refused instead of taking the first one's file.
            let pidFile = try Device.pidFile(server: serverName, device: name)
            let claim = open(pidFile, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard claim >= 0 else {
                Output.diagnostic("jas device plug: cannot write \(pidFile): \(String(cString: strerror(errno)))")
                throw ExitCode(2)
            }
            guard flock(claim, LOCK_EX | LOCK_NB) == 0 else {
                let holder = (try? String(contentsOfFile: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                Output.diagnostic("jas device plug: '\(name)' is already plugged into '\(serverName)' by pid \(holder ?? "?"); "
                                  + "unplug it first (jas device unplug \(name) --server \(serverName))")
                throw ExitCode(2)
            }
            let device: SimulatedDevice
            do {
                device = try SimulatedDevice(name: name, serverName: serverName, type: type,
                                             channels: channels, prettyName: prettyName)
            } catch {
                Output.diagnostic("jas device plug: \(Output.reason(error))")
                throw ExitCode(2)
            }
            let pid = Array("\(getpid())\n".utf8)
            _ = ftruncate(claim, 0)
            _ = pid.withUnsafeBytes { pwrite(claim, $0.baseAddress, $0.count, 0) }
            Output.line("plugged '\(name)' (\(type.rawValue), \(channels) channels) into '\(serverName)': "
                  + "\(name):playback_1…\(channels) in, \(name):capture_1…\(channels) out")
            Signals.onInterrupt {
                device.unplug()
                unlink(pidFile)
            }
            while true { pause() }
        }
    }

    struct Unplug: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unplug a device plugged with `jas device plug`.")

        @Argument(help: "The device name.")
        var name: String

        @OptionGroup var server: ServerOption

        func validate() throws { try Device.checkName(name) }

        func run() throws {
            let serverName = server.resolvedName
            let pidFile = try Device.pidFile(server: serverName, device: name)
            let descriptor = open(pidFile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else {
                Output.diagnostic("jas device unplug: no device '\(name)' plugged into '\(serverName)' by jas (no \(pidFile))")
                throw ExitCode(1)
            }
            defer { close(descriptor) }
            // Only the plugging process holds the lock; a file nobody holds is left over, and nobody is signalled.
            guard flock(descriptor, LOCK_SH | LOCK_NB) != 0 else {
                unlink(pidFile)
                Output.diagnostic("jas device unplug: '\(name)' is not plugged any more (its process is gone); "
                                  + "removed its stale \(pidFile)")
                throw ExitCode(1)
            }
            guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                  let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 1,
                  Self.isPlugProcess(pid, device: name) else {
                Output.diagnostic("jas device unplug: \(pidFile) does not name the jas process that plugged '\(name)'; "
                                  + "nothing was signalled")
                throw ExitCode(2)
            }
            guard kill(pid, SIGTERM) == 0 else {
                Output.diagnostic("jas device unplug: the process of '\(name)' (pid \(pid)) could not be signalled")
                throw ExitCode(1)
            }
            // Wait until its ports are gone from the server (at most 5 s).
            for _ in 0..<500 where kill(pid, 0) == 0 { usleep(10_000) }
            Output.line("unplugged '\(name)' from '\(serverName)'")
        }

        /// Whether `pid` runs `jas device plug NAME` (its command line says so).
        static func isPlugProcess(_ pid: pid_t, device: String) -> Bool {
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard let command = arguments.firstIndex(of: "device"), arguments.count > command + 2,
                  arguments[command + 1] == "plug" else { return false }
            return arguments[(command + 2)...].contains(device)
        }
    }
}
