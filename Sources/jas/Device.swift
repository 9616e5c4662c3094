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

    /// Where a plugged device's process leaves its PID: one file per server and device.
    static func pidFile(server: String, device: String) -> String {
        let base = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? NSTemporaryDirectory()
        return "\(base)/jas-devices/\(server)/\(device).pid"
    }

    struct Plug: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Plug a device in; it stays plugged while this command runs (Ctrl-C or `jas device unplug` ends it)."
        )

        @Argument(help: "The device name: its JACK client name and route uid.")
        var name: String

        @Option(help: "The JACK server (default: $JACK_DEFAULT_SERVER or 'default').")
        var server: String?

        @Option(help: "Port type: \(AudioSessionPort.allCases.map(\.rawValue).joined(separator: ", ")).")
        var type: String = "headphones"

        @Option(help: "Channels in each direction.")
        var channels: Int = 2

        @Option(help: "A readable name for the device.")
        var prettyName: String?

        func validate() throws {
            guard AudioSessionPort(rawValue: type) != nil else {
                throw ValidationError("unknown port type '\(type)'; use \(AudioSessionPort.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard (1...64).contains(channels) else { throw ValidationError("--channels must be 1…64") }
        }

        func run() throws {
            let serverName = server ?? Client.defaultServerName
            let device: SimulatedDevice
            do {
                device = try SimulatedDevice(name: name, serverName: serverName, type: AudioSessionPort(rawValue: type)!,
                                             channels: channels, prettyName: prettyName)
            } catch {
                Output.diagnostic("jas device plug: \(error)")
                throw ExitCode(2)
            }
            let pidFile = Device.pidFile(server: serverName, device: name)
            try? FileManager.default.createDirectory(atPath: (pidFile as NSString).deletingLastPathComponent,
                                                     withIntermediateDirectories: true)
            try? "\(getpid())\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
            Output.line("plugged '\(name)' (\(type), \(channels) channels) into '\(serverName)': "
                  + "\(name):playback_1…\(channels) in, \(name):capture_1…\(channels) out")
            fflush(nil)
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

        @Option(help: "The JACK server (default: $JACK_DEFAULT_SERVER or 'default').")
        var server: String?

        func run() throws {
            let serverName = server ?? Client.defaultServerName
            let pidFile = Device.pidFile(server: serverName, device: name)
            guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                  let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                Output.diagnostic("jas device unplug: no device '\(name)' plugged into '\(serverName)' by jas (no \(pidFile))")
                throw ExitCode(1)
            }
            guard kill(pid, SIGTERM) == 0 else {
                unlink(pidFile)
                Output.diagnostic("jas device unplug: the process of '\(name)' (pid \(pid)) is gone; removed its stale pid file")
                throw ExitCode(1)
            }
            // Wait until its ports are gone from the server (at most 5 s).
            for _ in 0..<500 where kill(pid, 0) == 0 { usleep(10_000) }
            Output.line("unplugged '\(name)' from '\(serverName)'")
        }
    }
}
