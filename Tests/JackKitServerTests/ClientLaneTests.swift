import Foundation
import Glibc
import JackKit
@testable import JackRuntime
import JackTestSupport
import LoopbackHarness
import Synchronization
import XCTest

/// JackKit's `Client` runs no lifecycle of its own: its deactivation, its
/// close, its metadata calls and the news that its server went away all go to
/// the lane that made it (JackRuntime's `ClientLifecycle` in every program).
final class ClientLaneTests: JackTestCase {
    /// A lane that writes down what it is asked, then does it the real lane's way.
    private final class RecordingLane: ClientLane {
        let steps = Mutex<[String]>([])
        private let real = ClientLifecycle.shared

        private func note(_ step: String) { steps.withLock { $0.append(step) } }

        func opened(_ client: ClientTeardown) {
            note("opened \(client.name)")
            real.opened(client)
        }

        func close(_ client: ClientTeardown) -> ClientCloseOutcome {
            note("close \(client.name)\(client.serverWentAway ? " of a server gone" : "")")
            return real.close(client)
        }

        func deactivate(_ client: ClientTeardown,
                        _ body: @escaping @Sendable () -> Result<Int32, JackError>) throws(JackError) -> Result<Int32, JackError> {
            note("deactivate \(client.name)")
            return try real.deactivate(client, body)
        }

        func metadataCall<T>(_ what: String, _ body: @escaping @Sendable () -> T?) -> T? {
            note("metadata: \(what)")
            return real.metadataCall(what, body)
        }

        func serverWentAway() {
            note("server went away")
            real.serverWentAway()
        }
    }

    func testAClientLeavesItsDeactivationCloseMetadataAndShutdownToItsLane() throws {
        let server = try startServer()
        let lane = RecordingLane()
        let opened = try ClientLifecycle.shared.open(name: "kit", server: server.name)
        let client = Client(opened: try XCTUnwrap(opened.handle), serverName: server.name,
                            notificationThreadID: opened.notificationThreadID, lane: lane)
        try client.activate()
        try client.deactivate()
        try client.setProperty(MetadataKey.prettyName, value: "Kit", on: client.uuid)
        XCTAssertEqual(client.property(MetadataKey.prettyName, on: client.uuid), "Kit")
        try client.activate()
        XCTAssertEqual(lane.steps.withLock { $0 }, ["opened kit", "deactivate kit", "metadata: setting \(MetadataKey.prettyName)",
                                                    "metadata: reading \(MetadataKey.prettyName)"])

        // The server dies; the client's shutdown callback tells its lane, and the close is the lane's.
        XCTAssertEqual(Glibc.kill(server.pid, SIGKILL), 0)
        XCTAssertTrue(waitUntil(timeout: 10) { lane.steps.withLock { $0.contains("server went away") } })
        XCTAssertTrue(client.serverWentAway)
        XCTAssertEqual(client.close(), .closed)
        XCTAssertEqual(client.close(), .alreadyClosed, "a second close is the client's own answer")
        XCTAssertEqual(lane.steps.withLock { Array($0.suffix(2)) }, ["server went away", "close kit of a server gone"])
        XCTAssertNil(ClientLifecycle.shared.wedgedReason)
        // A killed jackd cannot free its slot in the server table itself (the harness's `kill()` does this too).
        server.stop()
        _ = ServerRegistry.reclaimDeadServers()
    }
}
