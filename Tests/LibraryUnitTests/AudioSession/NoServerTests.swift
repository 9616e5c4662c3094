import JackAudioSession
import JackKit
import Foundation
import LoopbackHarness
import XCTest

/// Test 4: a session against a server that is not running fails fast with
/// the typed error, naming the server.
final class NoServerTests: XCTestCase {
    func testActivationWithoutServerFailsFastNamingIt() {
        let name = LoopbackServer.uniqueName(prefix: "nobody-home")
        let session = AudioSession(clientName: "lonely", serverName: name)
        try? session.setCategory(.playAndRecord, mode: .measurement)
        let started = Date()
        XCTAssertThrowsError(try session.setActive(true)) { error in
            guard let error = error as? AudioSessionError else { return XCTFail("untyped error \(error)") }
            XCTAssertEqual(error.sessionCode, .mediaServicesFailed)
            guard case .serverNotRunning(server: name, status: _)? = error.cause else {
                return XCTFail("the JACK error underneath is kept: \(String(describing: error.cause))")
            }
            XCTAssertTrue(error.message.contains(name), error.message)
            XCTAssertTrue(error.message.contains("jackd -n \(name)"), "says how to start one: \(error.message)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        XCTAssertFalse(session.isActive)
    }
}
