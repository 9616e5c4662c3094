import Foundation
import JackKit
import JackRuntime
import JackTestSupport
import LoopbackHarness
import Synchronization
import XCTest

final class ClientTests: JackTestCase {
    func testOpensOnNamedServerAndReadsItsSettings() throws {
        let server = try startServer(sampleRate: 44100, period: 128)
        let client = try Client(name: "kit", serverName: server.name)
        defer { client.close() }
        XCTAssertEqual(client.sampleRate, 44100)
        XCTAssertEqual(client.bufferSize, 128)
        XCTAssertEqual(client.serverName, server.name)
        XCTAssertNotEqual(client.uuid, 0)
    }

    /// A client's UUID is the server's for as long as the value lives. After
    /// its server went away, the next open in the process closes the client on
    /// the lane first (libjack would close every client of the process at that
    /// open), and its session may be reading the UUID just then, to tell its
    /// own published state from the others'. Read as 0 (the client closed),
    /// the session took its own state for a later activation and interrupted
    /// itself, and the reset after stayed inactive: the hundred restarts, once
    /// in CI and once in about 50 runs three at a time beside a busy loop,
    /// where the harness's readiness probe for the restarted jackd was that open.
    func testAClientsUUIDOutlivesItsServerAndItsClose() throws {
        var server = try startServer()
        let client = try Client(name: "kit", serverName: server.name)
        defer { client.close() }
        let uuid = client.uuid
        let observer = try Client(name: "observer", serverName: server.name)
        XCTAssertEqual(observer.uuid(ofClient: "kit"), uuid, "the server's UUID")
        observer.close()
        server.kill()
        XCTAssertTrue(waitUntil(timeout: 10) { client.serverWentAway })
        // Its readiness probe is the next open in this process: the lane closes `kit` before it.
        server = try startServer(name: server.name)
        XCTAssertTrue(client.isClosed, "the next open closed it")
        XCTAssertEqual(client.uuid, uuid)
    }

    func testMissingServerIsTypedErrorNamingTheServer() throws {
        let name = LoopbackServer.uniqueName(prefix: "absent")
        XCTAssertThrowsError(try Client(name: "kit", serverName: name)) { error in
            guard case let JackError.serverNotRunning(server, _) = error else {
                return XCTFail("expected serverNotRunning, got \(error)")
            }
            XCTAssertEqual(server, name)
            XCTAssertTrue("\(error)".contains(name))
        }
    }

    func testListsPhysicalPortsByDirection() throws {
        let server = try startServer(loopbackChannels: 3)
        let client = try Client(name: "kit", serverName: server.name)
        defer { client.close() }
        let capture = client.portNames(flags: [.physical, .output])
        let playback = client.portNames(flags: [.physical, .input])
        XCTAssertEqual(capture, ["system:capture_1", "system:capture_2",
                                 "loopback:capture_1", "loopback:capture_2", "loopback:capture_3"])
        XCTAssertEqual(playback.filter { $0.hasPrefix("loopback:") },
                       ["loopback:playback_1", "loopback:playback_2", "loopback:playback_3"])
        let port = try XCTUnwrap(client.port(named: "loopback:capture_2"))
        XCTAssertTrue(port.flags.contains([.output, .physical, .terminal]))
        XCTAssertEqual(port.typeName, PortType.audio.rawValue)
    }

    func testConnectDisconnectAndEventsArrive() throws {
        let server = try startServer()
        let client = try Client(name: "kit", serverName: server.name)
        defer { client.close() }
        let events = Mutex<[ClientEvent]>([])
        try client.setEventHandler { event in events.withLock { $0.append(event) } }
        let input = try client.registerPort("in", flags: .input)
        try client.activate()
        try client.connect("loopback:capture_1", to: input.name)
        try client.connect("loopback:capture_1", to: input.name) // already connected: fine
        assertEventuallyEqual(input.connections, ["loopback:capture_1"])
        XCTAssertTrue(waitUntil {
            events.withLock { $0.contains(.portConnection(source: "loopback:capture_1", destination: "kit:in", connected: true)) }
        })
        try client.disconnect("loopback:capture_1", from: input.name)
        assertEventuallyEqual(input.connections, [])
        XCTAssertThrowsError(try client.connect("loopback:capture_1", to: "nobody:here")) { error in
            XCTAssertEqual(error as? JackError, .portNotFound(port: "nobody:here", server: server.name))
        }
        let other = try Client(name: "other", serverName: server.name)
        other.close()
        XCTAssertTrue(waitUntil {
            events.withLock { $0.contains(.clientRegistration(name: "other", registered: false)) }
        })
    }

    func testBufferSizeRequestAndCallback() throws {
        let server = try startServer(period: 64)
        let client = try Client(name: "kit", serverName: server.name)
        defer { client.close() }
        let sizes = Mutex<[Int]>([])
        try client.setEventHandler { event in
            if case let .bufferSizeChanged(frames) = event { sizes.withLock { $0.append(frames) } }
        }
        try client.activate()
        try client.requestBufferSize(256)
        XCTAssertEqual(client.bufferSize, 256)
        XCTAssertTrue(waitUntil { sizes.withLock { $0.contains(256) } })
    }

    func testMetadataRoundTripAndChangeCallback() throws {
        let server = try startServer()
        let client = try Client(name: "kit", serverName: server.name)
        defer { client.close() }
        let changes = Mutex<[String]>([])
        try client.setEventHandler { event in
            if case let .propertyChange(_, key, _) = event { changes.withLock { $0.append(key) } }
        }
        try client.activate()
        let writer = try Client(name: "writer", serverName: server.name)
        defer { writer.close() }
        try writer.setProperty(MetadataKey.prettyName, value: "Front mics", on: writer.uuid)
        XCTAssertEqual(client.property(MetadataKey.prettyName, on: writer.uuid), "Front mics")
        XCTAssertTrue(waitUntil { changes.withLock { $0.contains(MetadataKey.prettyName) } })
        try writer.removeProperty(MetadataKey.prettyName, on: writer.uuid)
        XCTAssertNil(client.property(MetadataKey.prettyName, on: writer.uuid))
    }

    func testShutdownArrivesOnceWhenServerStops() throws {
        let server = try startServer()
        let client = try Client(name: "kit", serverName: server.name)
        defer { client.close() }
        let shutdowns = Atomic<Int>(0)
        try client.setEventHandler { event in
            if case .shutdown = event { shutdowns.add(1, ordering: .relaxed) }
        }
        try client.activate()
        server.stop()
        XCTAssertTrue(waitUntil { shutdowns.load(ordering: .relaxed) > 0 })
        usleep(200_000)
        XCTAssertEqual(shutdowns.load(ordering: .relaxed), 1)
    }

    func testLatencyRangesOfDummyBackendPorts() throws {
        // jackd2 1.9.21's dummy backend has no -I/-O: capture is one period,
        // playback two.
        for period in [64, 256] {
            let server = try startServer(period: period)
            let client = try Client(name: "kit", serverName: server.name)
            defer { client.close() }
            let capture = try XCTUnwrap(client.port(named: "system:capture_1"))
            let playback = try XCTUnwrap(client.port(named: "system:playback_1"))
            XCTAssertEqual(capture.latencyRange(.capture), LatencyRange(min: period, max: period))
            XCTAssertEqual(playback.latencyRange(.playback), LatencyRange(min: 2 * period, max: 2 * period))
        }
    }

    func testLatencyHandlerSetsOwnPortRanges() throws {
        let server = try startServer()
        let device = try Client(name: "device", serverName: server.name)
        defer { device.close() }
        let capture = try device.registerPort("capture_1", flags: [.output, .physical, .terminal])
        let playback = try device.registerPort("playback_1", flags: [.input, .physical, .terminal])
        try device.setLatencyHandler { mode in
            switch mode {
            case .capture: capture.setLatencyRange(LatencyRange(min: 70, max: 75), .capture)
            case .playback: playback.setLatencyRange(LatencyRange(min: 140, max: 141), .playback)
            }
        }
        try device.setProcessor(RealtimeProcessor(client: device, inputs: [playback], outputs: [capture]) { _ in })
        try device.activate()
        let reader = try Client(name: "reader", serverName: server.name)
        defer { reader.close() }
        let input = try reader.registerPort("in", flags: .input)
        let output = try reader.registerPort("out", flags: .output)
        try reader.activate()
        try reader.connect("device:capture_1", to: input.name)
        try reader.connect(output.name, to: "device:playback_1")
        reader.recomputeLatencies()
        XCTAssertTrue(waitUntil {
            input.latencyRange(.capture) == LatencyRange(min: 70, max: 75)
                && output.latencyRange(.playback) == LatencyRange(min: 140, max: 141)
        }, "capture \(input.latencyRange(.capture)) playback \(output.latencyRange(.playback))")
    }
}

/// libjack's next open after any client's server went away closes and frees
/// every client of the process, on whatever server (jack2 assumes one per
/// process). the lane closes them first, the careful way, and tells each owner:
/// a client held on another, living server is closed, not freed under its owner.
final class ClientRetirementTests: JackTestCase {
    func testAnOpenAfterALossClosesEveryClientAndTellsItsOwner() throws {
        let lost = try startServer()
        let living = try startServer()
        let onLost = try Client(name: "on-lost", serverName: lost.name)
        let onLiving = try Client(name: "on-living", serverName: living.name)
        let heard = Mutex<[String]>([])
        try onLost.setEventHandler { if case .shutdown = $0 { heard.withLock { $0.append("on-lost") } } }
        try onLiving.setEventHandler { if case .shutdown = $0 { heard.withLock { $0.append("on-living") } } }
        lost.kill()
        XCTAssertTrue(waitUntil { onLost.serverWentAway }, "the lost client's shutdown callback ran")
        XCTAssertFalse(onLiving.serverWentAway)

        let next = try Client(name: "next", serverName: living.name)
        defer { next.close() }
        XCTAssertTrue(onLost.isClosed)
        XCTAssertTrue(onLiving.isClosed, "libjack would have freed it: the lane closed it first")
        XCTAssertTrue(waitUntil { heard.withLock { $0.contains("on-living") } }, "its owner hears of the loss")
        XCTAssertEqual(onLiving.sampleRate, 0, "a closed client answers without touching libjack")
        XCTAssertThrowsError(try onLiving.connect("system:capture_1", to: "system:playback_1"))
        XCTAssertEqual(onLiving.close(), .alreadyClosed)
        XCTAssertNil(ClientLifecycle.shared.wedgedReason)
    }
}

/// A metadata call under way while the process's last client closes: libjack
/// tears its metadata store's handle down in that close, and the call then
/// ran through a null pointer (two rehearsals crashed inside
/// `jack_get_property`, `DB->get` at offset 0x278). the lane keeps the two
/// apart (`LibraryGlobals`). Each round opens the only client of this
/// process, reads metadata on another thread without pause, and closes it.
final class MetadataCloseRaceTests: JackTestCase {
    func testMetadataCallsRacingTheLastCloseDoNotCrash() throws {
        let server = try startServer(period: 256)
        let reads = try raceTheLastClose(on: server.name, named: "racer") { client in
            let uuid = client.uuid
            return { _ = client.property(MetadataKey.prettyName, on: uuid) }
        }
        XCTAssertGreaterThan(reads, 60, "metadata was read while the clients closed")
        XCTAssertNil(MetadataCalls.notAnswering)
    }
}

/// Port calls take no client in libjack but read state the process's last
/// close destroys: reading a port's connections then hit libjack's
/// `WaitGraphChange` assertion and aborted the process (the 100-restart test
/// did, from a route refresh). A port handle now answers only while the
/// client it came from is open.
final class PortCloseRaceTests: JackTestCase {
    func testPortCallsRacingTheLastCloseDoNotCrash() throws {
        let server = try startServer(period: 256)
        let ports = Mutex<[JackKit.Port]>([])
        let reads = try raceTheLastClose(on: server.name, named: "port-racer") { client in
            let port = try client.registerPort("in", flags: .input)
            ports.withLock { $0.append(port) }
            return {
                _ = port.connections
                _ = port.name
                _ = port.latencyRange(.capture)
            }
        }
        XCTAssertGreaterThan(reads, 60, "the ports were read while their clients closed")
        XCTAssertEqual(ports.withLock { $0.filter { !$0.name.isEmpty }.count }, 0, "a port of a closed client still answered")
    }
}

/// 60 rounds: opens the only client of this process, runs the reader that
/// `prepare` makes from it on another thread without pause, and closes the
/// client under it after a random moment. The reads made in all.
func raceTheLastClose(on server: String, named prefix: String,
                      prepare: (Client) throws -> @Sendable () -> Void) throws -> Int {
    var reads = 0
    for round in 0..<60 {
        let client = try Client(name: "\(prefix)-\(round)", serverName: server)
        let read = try prepare(client)
        let done = DispatchSemaphore(value: 0)
        let running = Atomic<Bool>(true)
        let count = Atomic<Int>(0)
        Thread.detachNewThread {
            while running.load(ordering: .relaxed) {
                read()
                count.add(1, ordering: .relaxed)
            }
            done.signal()
        }
        usleep(UInt32.random(in: 0...3000))
        client.close()
        running.store(false, ordering: .relaxed)
        done.wait()
        reads += count.load(ordering: .relaxed)
    }
    return reads
}
