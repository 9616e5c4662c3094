// `make bench`: the measurement session's process callback cost next to a C
// passthrough client doing the same work on the same server, in the same run.
//
// The clients run at the same time, in the same JACK cycles, each timing its
// own callback: the C reference as its own process (c-passthrough), the same
// C code inside this process, and the Swift measurement session. Running them
// together gives them the same cache and scheduling weather, which on a small
// shared machine varies more from run to run than the clients differ.
//
// A second table times a multiRoute session with STREAMS stereo streams, each
// to its own device (the loopback's ports split into pairs by port-group
// metadata), next to a C client doing the same copies in the same cycles.
//
// With --pipewire the passthrough table is measured on a private headless
// PipeWire instead (its null sink's playback and monitor ports as the loop,
// 2 channels): this program starts the daemon and runs itself again under
// pw-jack (--on-pipewire NAME), so that every client loads PipeWire's libjack.
//
// usage: callback-bench [--c-reference PATH|none] [--period N] [--cycles N] [--rounds N] [--channels 2,32] [--streams 8]
//                       [--tables passthrough,multiroute] [--pipewire]
import JackAudioSession
import BenchmarkSupport
import CReference
import Foundation
import JackKit
import JackRuntime
import LoopbackHarness
import Synchronization

struct Options {
    var cReference = "Benchmarks/bin/c-passthrough"
    var period = 128
    var cycles = 4000
    var rounds = 4
    var channelCounts = [2, 32]
    var streams = 8
    /// The tables this program measures.
    static let allTables = ["passthrough", "multiroute"]
    /// Which tables to measure (all by default).
    var tables = allTables
    var pipewire = false
    /// Set in the copy of this program that runs under pw-jack: the daemon's name.
    var onPipeWire: String?

    static let usage = "usage: callback-bench [--c-reference PATH|none] [--period N] [--cycles N] [--rounds N] "
        + "[--channels 2,32] [--streams 8] [--tables passthrough,multiroute] [--pipewire]"

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            let value = flag == "--pipewire" ? "" : rest.popFirst() ?? ""
            switch flag {
            case "--c-reference": cReference = value
            case "--period": period = Int(value) ?? period
            case "--cycles": cycles = Int(value) ?? cycles
            case "--rounds": rounds = Int(value) ?? rounds
            case "--channels": channelCounts = value.split(separator: ",").compactMap { Int($0) }
            case "--streams": streams = Int(value) ?? streams
            case "--tables":
                tables = value.split(separator: ",").map(String.init)
                if let unknown = tables.first(where: { !Self.allTables.contains($0) }) {
                    let known = Self.allTables.joined(separator: ", ")
                    FileHandle.standardError.write(Data("callback-bench: no table '\(unknown)' (\(known))\n".utf8))
                    exit(2)
                }
            case "--pipewire": pipewire = true
            case "--on-pipewire": onPipeWire = value
            default: refuseOption(flag, tool: "callback-bench", usage: Self.usage)
            }
        }
    }
}

/// Starts the standalone C reference; `finish()` waits and returns its durations.
final class CReferenceProcess {
    let process = Process()
    let pipe = Pipe()

    init(_ path: String, server: String, loop: Loop, channels: Int, cycles: Int) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [server, String(channels), String(cycles),
                             loop.sources(channels).joined(separator: "\n"),
                             loop.destinations(channels).joined(separator: "\n")]
        process.standardOutput = pipe
        try process.run()
    }

    func finish() -> [UInt64] {
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { fatalError("C reference failed (\(process.terminationStatus))") }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { UInt64($0) }
    }
}

/// The ports a passthrough's channel N reads and writes: jackd's loopback
/// pairs, or a PipeWire null sink's monitor and playback ports.
struct Loop: Sendable {
    let source: @Sendable (Int) -> String
    let destination: @Sendable (Int) -> String

    static let jackdLoopback = Loop(source: { "loopback:capture_\($0)" }, destination: { "loopback:playback_\($0)" })
    static let pipeWireNullSink = Loop(source: { "Null Sink:monitor_\($0 == 1 ? "FL" : "FR")" },
                                       destination: { "Null Sink:playback_\($0 == 1 ? "FL" : "FR")" })

    func sources(_ channels: Int) -> [String] { (1...channels).map(source) }
    func destinations(_ channels: Int) -> [String] { (1...channels).map(destination) }
}

/// The measurement session under test: a passthrough render block.
func startSwiftSession(server: String, loop: Loop, channels: Int, recorder: CycleCostRecorder) throws -> AudioSession {
    // Consent given, as the C client has it: without it the session's inputs are silenced (zeroed every cycle).
    let session = AudioSession(clientName: "swift-session", serverName: server, recordConsent: .givenByCaller)
    try session.setCategory(.playAndRecord, mode: .measurement)
    try session.setPreferredInputNumberOfChannels(channels)
    try session.setPreferredOutputNumberOfChannels(channels)
    session.setPreferredInputPortNames(loop.sources(channels))
    session.setPreferredOutputPortNames(loop.destinations(channels))
    session.setRenderBlock { cycle in
        for (input, output) in zip(cycle.inputs, cycle.outputs) {
            output.update(from: input, count: cycle.frameCount)
        }
    }
    session.setCycleCostRecorder(recorder)
    try session.setActive(true)
    return session
}

/// The passthrough table: the Swift session and both C references, in the same cycles of `serverName`.
func passthroughTable(serverName: String, loop: Loop, channelCounts: [Int]) throws {
    print("| channels | C median (ns) | C p99 (ns) | C in-process median (ns) | Swift median (ns) | Swift p99 (ns) "
          + "| median ratio Swift/C | p99 ratio Swift/C | median ratio, Swift woken first | median ratio, Swift woken last "
          + "| Swift first / C first | Swift last / C last |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for channels in channelCounts {
        try passthroughRow(serverName: serverName, loop: loop, channels: channels)
    }
}

/// Which client runs first in a JACK cycle matters as much as what the
/// clients do: clients that depend on nothing but the driver are woken in the
/// order they joined the graph, and the first pays for the cycle's cold
/// shared memory (the engine's tables, the loopback's buffers) that the
/// others then find in cache. Measured on this 2-core VM at 2 channels: the
/// same Swift session ran at 1.27–1.51× the C median woken first, 0.97–1.07×
/// woken after the C clients. So the rounds alternate: even rounds start the
/// Swift session first, odd rounds after both C clients are connected, and
/// the table gives both orders and the ratio of the pooled samples. The
/// order columns divide by the C client of the same rounds, which ran in the
/// other place (Swift first: the external C client second); the last two
/// divide by a C client in the same place: the external one, first in the
/// odd rounds, and the in-process one, woken last in the even rounds.
func passthroughRow(serverName: String, loop: Loop, channels: Int) throws {
    var cSamples: [[UInt64]] = [[], []], inProcessSamples: [[UInt64]] = [[], []], swiftSamples: [[UInt64]] = [[], []]
    let sources = loop.sources(channels).joined(separator: "\n")
    let destinations = loop.destinations(channels).joined(separator: "\n")
    let watch = try Client(name: "bench-watch", serverName: serverName)
    defer { _ = watch.close() }
    let cClients = options.cReference == "none" ? 1 : 2
    for round in 0..<options.rounds {
        let swiftFirst = round % 2 == 0
        let warmUp = 300
        // Woken after the C clients, the Swift session starts later: the C
        // clients time enough cycles to cover its start and drop those.
        let lead = swiftFirst ? 0 : 4 * warmUp
        let recorder = CycleCostRecorder(capacity: options.cycles + 2 * warmUp)
        var session = swiftFirst ? try startSwiftSession(server: serverName, loop: loop, channels: channels, recorder: recorder) : nil
        // "none": no process of its own (under valgrind, which cannot spawn one here).
        func destinationConnections() -> Int { watch.port(named: loop.destination(1))?.connections.count ?? 0 }
        let connectedBefore = destinationConnections()
        let external = options.cReference == "none" ? nil
            : try CReferenceProcess(options.cReference, server: serverName, loop: loop, channels: channels,
                                    cycles: options.cycles + lead)
        // The external client joins the graph before the in-process one, so each has one place in every round.
        if external != nil {
            let connectedSoon = Date(timeIntervalSinceNow: 30)
            while destinationConnections() <= connectedBefore {
                guard Date() < connectedSoon else { fatalError("the C client did not connect to \(loop.destination(1))") }
                usleep(1_000)
            }
        }
        let inProcess = InProcessReference(cycles: options.cycles + lead) { durations in
            cref_passthrough_run(serverName, Int32(channels), Int32(options.cycles + lead), sources, destinations, durations)
        }
        if session == nil {
            let connectedSoon = Date(timeIntervalSinceNow: 30)
            while destinationConnections() < cClients {
                guard Date() < connectedSoon else { fatalError("the C clients did not connect to \(loop.destination(1))") }
                usleep(10_000)
            }
            session = try startSwiftSession(server: serverName, loop: loop, channels: channels, recorder: recorder)
        }
        let inProcessRound = Array(inProcess.finish().dropFirst(lead))
        inProcessSamples[round % 2] += inProcessRound
        cSamples[round % 2] += external.map { Array($0.finish().dropFirst(lead)) } ?? inProcessRound
        while !recorder.isFull { usleep(10_000) }
        try session?.setActive(false)
        session?.close()
        // The Swift cycles that ran while the C clients did: skip the start.
        swiftSamples[round % 2] += recorder.samples.dropFirst(2 * warmUp)
    }
    let c = Percentiles(cSamples[0] + cSamples[1]), inProcess = Percentiles(inProcessSamples[0] + inProcessSamples[1])
    let swift = Percentiles(swiftSamples[0] + swiftSamples[1])
    // The external C client is first in the odd rounds only when it has a process of its own.
    func placeRatio(_ swift: [UInt64], _ c: [UInt64]) -> String {
        guard !swift.isEmpty, !c.isEmpty, options.cReference != "none" else { return "–" }
        return String(format: "%.2f", Percentiles(swift).median / Percentiles(c).median)
    }
    func orderRatio(_ order: Int) -> String {
        guard !swiftSamples[order].isEmpty else { return "–" }
        return String(format: "%.2f", Percentiles(swiftSamples[order]).median / Percentiles(cSamples[order]).median)
    }
    print(String(format: "| %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |", channels, c.median, c.p99,
                 inProcess.median, swift.median, swift.p99, swift.median / c.median, swift.p99 / c.p99)
          + " \(orderRatio(0)) | \(orderRatio(1)) | \(placeRatio(swiftSamples[0], cSamples[1]))"
          + " | \(placeRatio(swiftSamples[1], inProcessSamples[0])) |")
}

/// --pipewire: a private daemon, and this program again under pw-jack to measure on it.
func measureOnPipeWire() throws -> Int32 {
    let daemon = try PipeWireServer(name: "jas-bench-pw-\(getpid())", quantum: options.period)
    defer { daemon.stop() }
    let child = Process()
    let command = daemon.command([CommandLine.arguments[0], "--on-pipewire", daemon.name, "--c-reference", options.cReference,
                                  "--period", String(options.period), "--cycles", String(options.cycles),
                                  "--rounds", String(options.rounds)])
    child.executableURL = URL(fileURLWithPath: command[0])
    child.arguments = Array(command.dropFirst())
    child.environment = ProcessInfo.processInfo.environment.merging(daemon.environment) { $1 }
    try child.run()
    child.waitUntilExit()
    if child.terminationStatus != 0 { print("---- the PipeWire daemon's log ----\n\(daemon.log)") }
    return child.terminationStatus
}

LibraryMessages.silence()
let options = Options(Array(CommandLine.arguments.dropFirst()))
if options.pipewire { exit(try measureOnPipeWire()) }
if let name = options.onPipeWire {
    print("PipeWire (\(LibraryVersion.text)), private headless daemon '\(name)', null sink, quantum \(options.period) frames; "
          + "\(options.rounds) rounds of \(options.cycles) cycles, all clients running in the same cycles")
    try passthroughTable(serverName: name, loop: .pipeWireNullSink, channelCounts: [2])
    exit(0)
}
let server = try LoopbackServer(name: "jas-bench-\(getpid())",
                                loopbackChannels: max(options.channelCounts.max()!, 2 * options.streams),
                                period: options.period)
defer { server.stop() }
print("server \(server.name): 48000 Hz, period \(options.period) frames; \(options.rounds) rounds of "
      + "\(options.cycles) cycles, all clients running in the same cycles")
if options.tables.contains("passthrough") {
    try passthroughTable(serverName: server.name, loop: .jackdLoopback, channelCounts: options.channelCounts)
}

/// The multiRoute render work: output channel p of the streams gets the next
/// period of track p, or with no tracks a copy of input p % 2. Everything a
/// cycle reads and writes (the track position, the tracks, the streams'
/// output ranges) sits in one allocation, which the render block captures
/// directly, as the C client's few globals sit next to each other: a class's
/// `var` read on the real-time thread is a call into the Swift runtime's
/// exclusivity check (`swift_beginAccess`, through thread-local storage),
/// which took about a fifth of this render's time; and each further object
/// between the block and its data is one more cache line a thread woken cold
/// waits for (the object, then the position, then the ranges took two thirds
/// of this render's samples in perf).
final class StreamCopier: @unchecked Sendable {
    /// The head of the block; the output ranges follow it.
    struct State {
        var position: Int
        let trackFrames: Int
        let tracks: UnsafePointer<Float>?
        let streamCount: Int
    }

    /// The block, as the render block captures it.
    struct Block: @unchecked Sendable { // written only by the real-time thread while the session runs
        let state: UnsafeMutablePointer<State>

        var ranges: UnsafeBufferPointer<Range<Int>> {
            UnsafeBufferPointer(start: Self.rangesStart(of: state), count: state.pointee.streamCount)
        }

        static var rangesOffset: Int {
            (MemoryLayout<State>.stride + MemoryLayout<Range<Int>>.alignment - 1)
                / MemoryLayout<Range<Int>>.alignment * MemoryLayout<Range<Int>>.alignment
        }

        @inline(__always)
        static func rangesStart(of state: UnsafeMutablePointer<State>) -> UnsafeMutablePointer<Range<Int>> {
            (UnsafeMutableRawPointer(state) + rangesOffset).assumingMemoryBound(to: Range<Int>.self)
        }

        func process(_ cycle: RenderCycle) {
            let frames = cycle.frameCount
            if state.pointee.position + frames > state.pointee.trackFrames { state.pointee.position = 0 }
            let start = state.pointee.position
            let tracks = state.pointee.tracks, trackFrames = state.pointee.trackFrames
            for range in ranges {
                for (offset, output) in cycle.outputs(in: range).enumerated() {
                    let channel = range.lowerBound + offset
                    let source = tracks.map { $0 + channel * trackFrames + start } ?? UnsafePointer(cycle.inputs[channel % 2])
                    output.update(from: source, count: frames)
                }
            }
            state.pointee.position = start + frames
        }
    }

    let block: Block

    init(_ streams: [AudioOutputStream], tracks: UnsafePointer<Float>?, trackFrames: Int) {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: Block.rangesOffset + streams.count * MemoryLayout<Range<Int>>.stride, alignment: 64)
        let state = raw.bindMemory(to: State.self, capacity: 1)
        state.initialize(to: State(position: 0, trackFrames: trackFrames, tracks: tracks, streamCount: streams.count))
        (raw + Block.rangesOffset).bindMemory(to: Range<Int>.self, capacity: streams.count)
            .initialize(from: streams.map(\.outputIndices), count: streams.count)
        block = Block(state: state)
    }

    deinit {
        Block.rangesStart(of: block.state).deinitialize(count: block.state.pointee.streamCount)
        block.state.deinitialize(count: 1)
        UnsafeMutableRawPointer(block.state).deallocate()
    }
}

/// A multiRoute session with `streams` stereo streams, stream s to the
/// loopback pair `pair<s>` (made a device of its own by port-group metadata).
func startMultirouteSession(server: String, streams: Int, copier: (([AudioOutputStream]) -> StreamCopier),
                            recorder: CycleCostRecorder) throws -> (AudioSession, StreamCopier) {
    let session = AudioSession(clientName: "swift-multiroute", serverName: server, recordConsent: .givenByCaller)
    try session.setCategory(.multiRoute)
    _ = try session.outputDevices()   // opens the client
    guard let client = session.client else { fatalError("cannot open a client on \(server)") }
    for port in 1...(2 * streams) {
        guard let handle = client.port(named: "loopback:playback_\(port)") else { fatalError("no loopback:playback_\(port)") }
        try client.setProperty(MetadataKey.portGroup, value: "pair\((port + 1) / 2)", on: handle.uuid)
    }
    let made = try (1...streams).map { stream in
        guard let device = session.availableOutputs.first(where: { $0.uid == "loopback/pair\(stream)" }) else {
            fatalError("no device loopback/pair\(stream): \(session.availableOutputs.map(\.uid))")
        }
        return try session.outputStream(named: "s\(stream)", to: device)
    }
    session.setPreferredInputPortNames(["loopback:capture_1", "loopback:capture_2"])
    try session.setPreferredInputNumberOfChannels(2)
    let work = copier(made)
    let block = work.block
    session.setRenderBlock { block.process($0) }
    session.setCycleCostRecorder(recorder)
    try session.setActive(true)
    return (session, work)
}

// Tracks: one second of noise at about -20 dBFS per output channel; the C
// client gets its own copy, so neither finds the other's reads in the cache.
let trackFrames = 48000
let trackChannels = 2 * options.streams
func makeTracks() -> UnsafeMutableBufferPointer<Float> {
    let tracks = UnsafeMutableBufferPointer<Float>.allocate(capacity: trackChannels * trackFrames)
    var noise: UInt64 = 0x2545_F491_4F6C_DD1D
    for index in tracks.indices {
        noise = noise &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        tracks[index] = 0.1 * Float(Int32(truncatingIfNeeded: noise >> 32)) / Float(Int32.max)
    }
    return tracks
}
if options.tables.contains("multiroute") {
    let swiftTracks = makeTracks(), cTracksStorage = makeTracks()

    print("")
    print("multiRoute: \(options.streams) streams × 2 channels to \(options.streams) devices (loopback pairs split by port-group "
          + "metadata); each stream plays its own track, or copies the (silent) inputs: the worst case of the level watch")
    print("| streams | source | C median (ns) | C p99 (ns) | Swift median (ns) | Swift p99 (ns) | median ratio Swift/C | p99 ratio Swift/C |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for source in ["tracks", "silent inputs"] {
        let trackPointer = source == "tracks" ? UnsafePointer(swiftTracks.baseAddress!) : nil
        var cSamples: [UInt64] = [], swiftSamples: [UInt64] = []
        for _ in 0..<options.rounds {
            let warmUp = 300
            let recorder = CycleCostRecorder(capacity: options.cycles + 2 * warmUp)
            nonisolated(unsafe) let cTracks = source == "tracks" ? UnsafePointer(cTracksStorage.baseAddress!) : nil
            // The C client first, so that, where JACK orders the two, the Swift session does not run first.
            let reference = InProcessReference(cycles: options.cycles + 4 * warmUp) { durations in
                cref_multiroute_run(server.name, Int32(options.streams), cTracks, Int32(trackFrames),
                                    Int32(options.cycles + 4 * warmUp), durations)
            }
            usleep(200_000)
            let (session, copier) = try startMultirouteSession(server: server.name, streams: options.streams, copier: {
                StreamCopier($0, tracks: trackPointer, trackFrames: trackFrames)
            }, recorder: recorder)
            while !recorder.isFull { usleep(10_000) }
            cSamples += reference.finish().dropFirst(2 * warmUp)
            try session.setActive(false)
            session.close()
            withExtendedLifetime(copier) {}
            swiftSamples += recorder.samples.dropFirst(2 * warmUp)
        }
        let c = Percentiles(cSamples), swift = Percentiles(swiftSamples)
        print(String(format: "| %d | %@ | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |", options.streams, source, c.median, c.p99,
                     swift.median, swift.p99, swift.median / c.median, swift.p99 / c.p99))
    }
}
