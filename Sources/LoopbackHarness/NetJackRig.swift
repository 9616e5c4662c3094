#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JackKit
import JackRuntime
import Synchronization

/// netjack2 on one box: a master jackd on this machine (dummy backend with no
/// ports of its own, `-L` loopback ports, the `netmanager` internal client
/// auto-connecting) and a slave jackd (`-d net`) on a `SeparateMachine`.
///
/// The master's only physical ports are its loopback pairs, so the slave gets
/// that many `system:` ports and netmanager connects them through the loopback:
/// what a client on the slave plays to `system:playback_N` crosses the network,
/// goes round the master's loopback (one master period) and returns on the
/// slave's `system:capture_N`.
///
/// jack2's libjack talks to one server per process: work on the slave runs as
/// processes in the machine (`slaveCommand`); this process only ever opens
/// clients of the master.
public final class NetJackRig: @unchecked Sendable {
    // @unchecked: `master` and `slavePID` change only in the restart methods, which a test calls from one thread.
    /// The master, on this machine.
    public private(set) var master: LoopbackServer
    /// The machine the slave runs on.
    public let machine: SeparateMachine
    /// The slave's server name (on its machine).
    public let slaveName: String
    /// The slave's name on the network: its client's name on the master.
    public let netName: String
    /// Network latency the slave asks for, in periods (`-l`).
    public let networkLatency: Int
    /// The UDP port master and slave meet on (a free one, so rigs never meet each other's).
    public let udpPort: Int
    /// The slave jackd (through setpriv and nsenter, which exec it).
    public private(set) var slavePID: pid_t = 0
    /// Where the slave's output goes.
    public let slaveLogPath: String
    private let loopbackChannels: Int
    private let period: Int
    private let sampleRate: Int
    private let stopped = Atomic<Bool>(false)

    public enum Failure: Error, CustomStringConvertible {
        case netmanagerNotLoaded(master: String, output: String)
        case slaveNotConnected(slave: String, log: String)

        public var description: String {
            switch self {
            case let .netmanagerNotLoaded(master, output):
                return "could not load netmanager into jackd '\(master)' (jack_load): \(output)"
            case let .slaveNotConnected(slave, log):
                return "netjack2 slave '\(slave)' did not connect to its master; its log:\n\(log)"
            }
        }
    }

    /// Starts the master, loads netmanager, makes the machine and starts the
    /// slave in it; returns once the slave's ports exist.
    public init(loopbackChannels: Int = 2, sampleRate: Int = 48000, period: Int = 256, networkLatency: Int = 2,
                timeout: Double = 15) throws {
        self.loopbackChannels = loopbackChannels
        self.sampleRate = sampleRate
        self.period = period
        self.networkLatency = networkLatency
        let serial = LoopbackServer.uniqueName(prefix: "net")
        slaveName = serial + "-slave"
        netName = serial + "-box"
        udpPort = try FreePort.udp()
        slaveLogPath = NSTemporaryDirectory() + "/\(slaveName).log"
        master = try Self.startMaster(name: serial + "-master", channels: loopbackChannels, sampleRate: sampleRate,
                                      period: period, udpPort: udpPort)
        do {
            machine = try SeparateMachine()
        } catch {
            master.stop()
            throw error
        }
        do {
            try startSlave(timeout: timeout)
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// The frames the master's own path adds to the round trip: its loopback's
    /// capture latency (one master period).
    public var masterLoopFrames: Int { period }

    /// `arguments` as a command that runs on the slave's machine.
    public func slaveCommand(_ arguments: [String]) -> [String] { machine.command(arguments) }

    /// Everything the slave printed so far.
    public var slaveLog: String { (try? String(contentsOfFile: slaveLogPath, encoding: .utf8)) ?? "" }

    /// How many times the slave has connected to a master since it started
    /// (it prints its network parameters once its ports exist).
    public var slaveConnections: Int { slaveLog.components(separatedBy: "Network parameters").count - 1 }

    /// Kills the master (SIGKILL, or SIGTERM when `hard` is false), starts a
    /// new one of the same name with netmanager, and waits until the slave is
    /// connected to it again.
    public func restartMaster(hard: Bool = true, downtime: Double = 0, timeout: Double = 20) throws {
        let name = master.name
        let before = slaveConnections
        if hard { master.kill() } else { master.stop() }
        if downtime > 0 { usleep(useconds_t(downtime * 1_000_000)) }
        master = try Self.startMaster(name: name, channels: loopbackChannels, sampleRate: sampleRate, period: period,
                                      udpPort: udpPort)
        try waitForSlave(connections: before + 1, timeout: timeout)
    }

    /// Stops the slave (SIGTERM, or SIGKILL when `hard`), then starts it again
    /// on the same machine and waits until it is connected to the master.
    public func restartSlave(hard: Bool = false, downtime: Double = 0, timeout: Double = 20) throws {
        stopSlave(hard: hard)
        if downtime > 0 { usleep(useconds_t(downtime * 1_000_000)) }
        try startSlave(timeout: timeout)
    }

    /// Stops the slave, the machine and the master. Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopSlave(hard: false)
        machine.stop()
        master.stop()
    }

    private func stopSlave(hard: Bool) {
        guard slavePID > 0 else { return }
        if hard {
            _ = Glibc.kill(slavePID, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(slavePID, &status, 0)
        } else {
            LoopbackServer.terminate(slavePID)
        }
        LiveServers.shared.remove(slavePID)
        slavePID = 0
    }

    private func startSlave(timeout: Double) throws {
        let jackd = LoopbackServer.findExecutable("jackd") ?? "jackd"
        let setpriv = LoopbackServer.findExecutable("setpriv") ?? "setpriv"
        unlink(slaveLogPath)
        slavePID = try LoopbackServer.spawn(
            [setpriv, "--pdeathsig", "TERM", "--"]
                + machine.command([jackd, "-n", slaveName, "-r", "-d", "net", "-a", "127.0.0.1", "-p", String(udpPort),
                                   "-l", String(networkLatency), "-n", netName]),
            logPath: slaveLogPath)
        LiveServers.shared.add(slavePID)
        try waitForSlave(connections: 1, timeout: timeout)
    }

    private func waitForSlave(connections: Int, timeout: Double) throws {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            if waitpid(slavePID, &status, WNOHANG) != 0 { break }
            if slaveConnections >= connections, masterSeesSlave() { return }
            usleep(20_000)
        }
        throw Failure.slaveNotConnected(slave: slaveName, log: slaveLog)
    }

    /// Whether netmanager on the master has the slave's ports connected through the loopback.
    /// After a quick restart of the slave the master may still hold its old
    /// client (it notices the loss only when a receive times out), and then
    /// names the new one with a suffix (`-01`): either counts.
    private func masterSeesSlave() -> Bool {
        guard let client = try? Client.checkedOpen(name: "harness-net-probe", serverName: master.name) else { return false }
        defer { client.close() }
        let name = NSRegularExpression.escapedPattern(for: netName)
        let clients = Set(client.portNames(matching: "^\(name)(-[0-9]+)?:from_slave_1$").map { $0.prefix { $0 != ":" } })
        return clients.contains { slave in
            (1...loopbackChannels).allSatisfy { channel in
                client.port(named: "\(slave):from_slave_\(channel)")?.connections.contains("loopback:playback_\(channel)") == true
            }
        }
    }

    private static func startMaster(name: String, channels: Int, sampleRate: Int, period: Int, udpPort: Int) throws -> LoopbackServer {
        let server = try LoopbackServer(name: name, loopbackChannels: channels, sampleRate: sampleRate, period: period,
                                        backendArguments: ["-C", "0", "-P", "0"])
        let jackLoad = LoopbackServer.findExecutable("jack_load") ?? "jack_load"
        let logPath = NSTemporaryDirectory() + "/\(name)-netmanager.log"
        defer { unlink(logPath) }
        let loader = try LoopbackServer.spawn([jackLoad, "-s", name, "netmanager", "-i", "-c -p \(udpPort)"], logPath: logPath)
        // jack_load loads the client into jackd and ends; bounded, since a
        // libjack close can hang (jack2 #395).
        var status: Int32 = 0
        var ended = false
        for _ in 0..<1000 {
            if waitpid(loader, &status, WNOHANG) != 0 { ended = true; break }
            usleep(10_000)
        }
        if !ended {
            _ = Glibc.kill(loader, SIGKILL)
            _ = waitpid(loader, &status, 0)
        }
        let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        guard ended, status == 0, output.contains("netmanager is running") else {
            server.stop()
            throw Failure.netmanagerNotLoaded(master: name, output: ended ? output : "jack_load did not end within 10 s")
        }
        return server
    }
}
