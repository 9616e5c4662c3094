import ArgumentParser
import JackAudioSession
import Foundation
import JackKit
import LoopbackHarness

/// `jas device plug|unplug`: simulated devices for route-change tests.
struct Device: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Plug or unplug a simulated device (a JACK client with physical ports and a port type).",
        subcommands: [Plug.self, Unplug.self]
    )

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
            let claim: DevicePlugFile.Claim
            do {
                claim = try DevicePlugFile.Claim(server: serverName, device: name)
            } catch {
                Output.diagnostic("jas device plug: \(Output.safe(error.description))")
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
            Output.line("plugged '\(name)' (\(type.rawValue), \(channels) channels) into '\(serverName)': "
                  + "\(name):playback_1…\(channels) in, \(name):capture_1…\(channels) out")
            Signals.onInterrupt {
                device.unplug()
                claim.release()
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
            do {
                try DevicePlugFile.unplug(server: serverName, device: name)
            } catch {
                Output.diagnostic("jas device unplug: \(Output.safe(error.description))")
                switch error {
                case .notPlugged, .stale, .cannotSignal: throw ExitCode(1)
                case .unusable, .alreadyPlugged, .notTheHolder: throw ExitCode(2)
                }
            }
            Output.line("unplugged '\(name)' from '\(serverName)'")
        }
    }
}
