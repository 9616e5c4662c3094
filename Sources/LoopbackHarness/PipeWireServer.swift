#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A private headless PipeWire daemon for tests: no D-Bus, no session
/// manager, no hardware. Its own runtime folder (so it shares nothing with a
/// desktop's PipeWire), null-audio-sink nodes in DSP mode with monitor ports
/// (without `adapter.auto-port-config` a node has no JACK ports), and the
/// `default` metadata object unless told otherwise (without it PipeWire's
/// `jack_set_property` fails). Stopped by its own PID.
///
/// JACK clients reach it through PipeWire's libjack: run them with
/// `command(_:)` (`pw-jack`, and the runtime folder in `environment`), and
/// pass `name` as the server name (it is the PipeWire remote's name).
public final class PipeWireServer: Sendable {
    /// The remote's name: the JACK server name clients pass.
    public let name: String
    /// The pipewire process.
    public let pid: pid_t
    /// Its runtime folder (socket, lock) and config.
    public let runtimeDirectory: String
    /// The null sinks' node descriptions: their JACK ports are `DESCRIPTION:playback_FL`/`_FR`
    /// (inputs) and `DESCRIPTION:monitor_FL`/`_FR` (outputs, not physical).
    public let sinks: [String]
    public let sampleRate: Int
    public let quantum: Int
    /// Where the daemon and its libjack come from.
    public let installation: PipeWireInstallation
    private let stopped = Atomic<Bool>(false)

    public enum Failure: Error, CustomStringConvertible {
        case notInstalled(String)
        case notReady(name: String, log: String)
        case command(String, String)

        public var description: String {
            switch self {
            case let .notInstalled(problem):
                return problem
            case let .command(command, output):
                return "`\(command)` failed: \(output)"
            case let .notReady(name, log):
                return "PipeWire '\(name)' did not come up; its log:\n\(log)"
            }
        }
    }

    public init(name: String = LoopbackServer.uniqueName(prefix: "jas-pw"), sinks: [String] = ["Null Sink"],
                sampleRate: Int = 48000, quantum: Int = 256, defaultMetadata: Bool = true, timeout: Double = 10,
                installation: PipeWireInstallation = .fromEnvironment) throws {
        if let problem = installation.problem { throw Failure.notInstalled(problem) }
        self.installation = installation
        self.name = name
        self.sinks = sinks
        self.sampleRate = sampleRate
        self.quantum = quantum
        runtimeDirectory = NSTemporaryDirectory() + "/\(name)"
        try FileManager.default.createDirectory(atPath: runtimeDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let config = runtimeDirectory + "/pipewire.conf"
        try Self.configuration(name: name, sinks: sinks, sampleRate: sampleRate, quantum: quantum,
                               defaultMetadata: defaultMetadata)
            .write(toFile: config, atomically: true, encoding: .utf8)
        let settings = ["PIPEWIRE_RUNTIME_DIR": runtimeDirectory, "XDG_RUNTIME_DIR": runtimeDirectory]
            .merging(installation.environment) { $1 }
        pid = try LoopbackServer.spawn(
            ["/usr/bin/env"] + settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                + [LoopbackServer.findExecutable("setpriv")!, "--pdeathsig", "TERM", "--", installation.executable("pipewire")!,
                   "-c", config],
            logPath: runtimeDirectory + "/pipewire.log")
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) != 0 { break }
            if access(runtimeDirectory + "/" + name, F_OK) == 0 { return }
            usleep(20_000)
        }
        let log = self.log
        stop()
        throw Failure.notReady(name: name, log: log)
    }

    deinit { stop() }

    /// The environment a client of this daemon needs (its installation's libraries included).
    public var environment: [String: String] {
        ["PIPEWIRE_RUNTIME_DIR": runtimeDirectory, "XDG_RUNTIME_DIR": runtimeDirectory].merging(installation.environment) { $1 }
    }

    /// `arguments` run with PipeWire's libjack (`pw-jack`, or the unpacked installation's) in `environment`.
    public func command(_ arguments: [String]) -> [String] {
        installation.jackClient(arguments)
    }

    /// The version of the libpipewire the daemon runs ("1.4.2"), as `pipewire --version` says it.
    public var version: String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: installation.executable("pipewire")!)
        process.arguments = ["--version"]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        guard (try? process.run()) != nil else { return nil }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").last { $0.hasPrefix("Linked with libpipewire ") }
            .map { String($0.dropFirst("Linked with libpipewire ".count)) }
    }

    /// Adds a null sink while the daemon runs (a device plugged in), the way
    /// the configuration's sinks are made; it stays until `removeSink`.
    /// Returns its node name. Its ports appear asynchronously.
    @discardableResult
    public func addSink(_ description: String) throws -> String {
        let node = "sink-" + description.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined()
        try pwCli(["create-node", "adapter",
                   "{ " + Self.nullSink(node: node, description: description, sampleRate: sampleRate)
                   + " object.linger = true }"])
        return node
    }

    /// A stereo null sink's adapter arguments: DSP ports with monitors
    /// (PipeWire 1.4 also needs the format, rate and channels, or it keeps one
    /// passthrough port and libjack shows none).
    static func nullSink(node: String, description: String, sampleRate: Int) -> String {
        "factory.name = support.null-audio-sink node.name = \"\(node)\" node.description = \"\(description)\" "
            + "media.class = \"Audio/Sink\" audio.position = [ FL FR ] audio.format = F32P audio.rate = \(sampleRate) "
            + "audio.channels = 2 adapter.auto-port-config = { mode = dsp monitor = true position = preserve }"
    }

    /// Removes a sink `addSink` made (a device unplugged).
    public func removeSink(node: String) throws {
        try pwCli(["destroy", node])
    }

    private func pwCli(_ arguments: [String]) throws {
        guard let program = installation.executable("pw-cli") else { throw Failure.notInstalled("pw-cli not found in \(installation)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["-r", name] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, !text.contains("Error") else {
            throw Failure.command("pw-cli " + arguments.joined(separator: " "), text)
        }
    }

    /// Everything the daemon printed so far.
    public var log: String { (try? String(contentsOfFile: runtimeDirectory + "/pipewire.log", encoding: .utf8)) ?? "" }

    /// Stops the daemon (SIGTERM, then SIGKILL after 3 s) and removes its folder. Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        LoopbackServer.terminate(pid)
        try? FileManager.default.removeItem(atPath: runtimeDirectory)
    }

    /// The daemon's whole configuration: what PipeWire's minimal.conf loads,
    /// with null sinks instead of ALSA devices; without `defaultMetadata`, no
    /// `default` metadata object (a daemon with no session manager and no
    /// such line in its configuration).
    static func configuration(name: String, sinks: [String], sampleRate: Int, quantum: Int,
                              defaultMetadata: Bool) -> String {
        let nodes = sinks.enumerated().map { index, description in
            "    { factory = adapter args = { "
                + nullSink(node: "null-sink-\(index + 1)", description: description, sampleRate: sampleRate) + " } }"
        }.joined(separator: "\n")
        return """
        context.properties = {
            core.daemon = true
            core.name = \(name)
            link.max-buffers = 16
            default.clock.rate = \(sampleRate)
            default.clock.quantum = \(quantum)
            default.clock.min-quantum = 16
        }
        context.spa-libs = {
            audio.convert.* = audioconvert/libspa-audioconvert
            support.* = support/libspa-support
        }
        context.modules = [
            { name = libpipewire-module-protocol-native }
            { name = libpipewire-module-metadata }
            { name = libpipewire-module-spa-node-factory }
            { name = libpipewire-module-client-node }
            { name = libpipewire-module-access args = { } }
            { name = libpipewire-module-adapter }
            { name = libpipewire-module-link-factory }
        ]
        context.objects = [
            \(defaultMetadata ? "{ factory = metadata args = { metadata.name = default } }" : "")
            { factory = spa-node-factory
                args = { factory.name = support.node.driver node.name = Dummy-Driver node.group = pipewire.dummy priority.driver = 20000 } }
            { factory = spa-node-factory
                args = { factory.name = support.node.driver node.name = Freewheel-Driver node.group = pipewire.freewheel node.freewheel = true priority.driver = 19000 } }
        \(nodes)
        ]

        """
    }
}
