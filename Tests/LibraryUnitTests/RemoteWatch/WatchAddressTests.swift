import RemoteWatch
import XCTest

/// What `--http` and `--http-token` accept, and why they refuse the rest.
final class WatchAddressTests: XCTestCase {
    func testAddressForms() throws {
        XCTAssertEqual(try WatchAddress(parsing: "8080"), WatchAddress(host: "127.0.0.1", port: 8080))
        XCTAssertEqual(try WatchAddress(parsing: ":8080"), WatchAddress(host: "127.0.0.1", port: 8080))
        XCTAssertEqual(try WatchAddress(parsing: "0.0.0.0:9000"), WatchAddress(host: "0.0.0.0", port: 9000))
        XCTAssertEqual(try WatchAddress(parsing: "localhost:1234"), WatchAddress(host: "127.0.0.1", port: 1234))
        XCTAssertEqual(try WatchAddress(parsing: "[::1]:80"), WatchAddress(host: "::1", port: 80))
        XCTAssertEqual(try WatchAddress(parsing: "[::1]:80").description, "[::1]:80")
        XCTAssertTrue(try WatchAddress(parsing: "127.0.0.5:1").isLoopback)
        XCTAssertTrue(try WatchAddress(parsing: "[::1]:1").isLoopback)
        XCTAssertFalse(try WatchAddress(parsing: "0.0.0.0:1").isLoopback)
        XCTAssertFalse(try WatchAddress(parsing: "192.168.1.20:1").isLoopback)
    }

    func testBadAddressesSayWhatIsWrong() {
        for (text, says) in [("studio.local:80", "not a numeric IP address"), ("127.0.0.1:http", "not a port"),
                             ("127.0.0.1:70000", "not a port"), ("::1:80", "in brackets"),
                             ("[::1]80", "a port must follow"), ("", "not a port")] {
            XCTAssertThrowsError(try WatchAddress(parsing: text), text) { error in
                XCTAssertTrue("\(error)".contains(says), "\(text): \(error)")
                XCTAssertTrue("\(error)".contains("e.g. 127.0.0.1:8080"), "\(error)")
            }
        }
    }

    func testTokens() throws {
        XCTAssertNoThrow(try WatchToken("s3cret-Token_1.2~x"))
        XCTAssertNoThrow(try WatchToken("abcd1234=="))
        XCTAssertThrowsError(try WatchToken("short")) { XCTAssertTrue("\($0)".contains("at least 8"), "\($0)") }
        XCTAssertThrowsError(try WatchToken("has a space in it")) { XCTAssertTrue("\($0)".contains("letters, digits"), "\($0)") }
        XCTAssertThrowsError(try WatchToken("========")) { XCTAssertTrue("\($0)".contains("letters, digits"), "\($0)") }
    }

    func testAnAddressOtherMachinesReachNeedsAToken() throws {
        let board = WatchBoard(tool: .meter, server: "default")
        XCTAssertThrowsError(try WatchServer(board: board, address: WatchAddress(host: "0.0.0.0", port: 0), token: nil,
                                             controls: .init())) { error in
            XCTAssertEqual(error as? WatchError, .tokenRequired("0.0.0.0:0"))
            XCTAssertTrue("\(error)".contains("without a token anyone who can reach it could read the meters"), "\(error)")
            XCTAssertTrue("\(error)".contains("every route asks for it"), "\(error)")
            // Which flag gives one is jas's to say, not the library's.
            XCTAssertFalse("\(error)".contains("--"), "\(error)")
        }
        XCTAssertNoThrow(try WatchServer(board: board, address: WatchAddress(host: "0.0.0.0", port: 0),
                                         token: try WatchToken("0123456789abcdef"), controls: .init()))
        XCTAssertNoThrow(try WatchServer(board: board, address: WatchAddress(port: 0), token: nil, controls: .init()))
    }
}
