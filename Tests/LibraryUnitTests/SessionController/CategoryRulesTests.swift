import JackAudioSession
import Foundation
import XCTest

/// Every category × mode × option set against the outcome the seeds give,
/// written out row by row in Fixtures/category-mode-options.tsv.
final class CategoryRulesTests: XCTestCase {
    static var fixture: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/category-mode-options.tsv")
    }

    func testEveryCombinationAgainstTheTable() throws {
        let rows = try String(contentsOf: Self.fixture, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(rows.count, 7 * 8 * 32)
        var checked = 0
        for row in rows {
            let fields = row.split(separator: "\t").map(String.init)
            let category = try XCTUnwrap(Category(rawValue: fields[0]), fields[0])
            let mode = try XCTUnwrap(Mode(rawValue: fields[1]), fields[1])
            let options = try parse(fields[2])
            let expected = fields[3]
            do {
                let resolved = try CategoryRules.resolve(category, mode: mode, options: options)
                XCTAssertEqual("ok:" + (resolved.names.isEmpty ? "-" : resolved.names.joined(separator: ",")), expected,
                               "\(row)")
            } catch {
                XCTAssertEqual(error.sessionCode.rawValue == -50 ? "-50" : error.sessionCode.fourCharacterCode, expected, "\(row): \(error)")
            }
            checked += 1
        }
        XCTAssertEqual(checked, 1792)
    }

    func testMixability() {
        XCTAssertTrue(CategoryRules.isMixable(.ambient, options: []))
        XCTAssertFalse(CategoryRules.isMixable(.playback, options: []))
        XCTAssertTrue(CategoryRules.isMixable(.playback, options: .mixWithOthers))
        XCTAssertTrue(CategoryRules.isMixable(.playAndRecord, options: .interruptSpokenAudioAndMixWithOthers))
        XCTAssertFalse(CategoryRules.isMixable(.soloAmbient, options: []))
        XCTAssertFalse(CategoryRules.isMixable(.record, options: []))
        XCTAssertFalse(CategoryRules.isMixable(.multiRoute, options: []))
        // "You can override the interruption characteristic of the AVAudioSessionCategoryPlayback,
        // AVAudioSessionCategoryPlayAndRecord, and AVAudioSessionCategoryMultiRoute categories so that
        // other audio is allowed to mix with yours." (guide, Fine-Tuning a Category)
        XCTAssertTrue(CategoryRules.isMixable(.multiRoute, options: .mixWithOthers))
        XCTAssertFalse(CategoryRules.isMixable(.audioProcessing, options: []))
    }

    func testSessionStoresWhatTheRulesResolve() throws {
        let session = AudioSession(clientName: "rules", serverName: "unused")
        XCTAssertEqual(session.category, .soloAmbient)
        XCTAssertEqual(session.mode, .default)
        try session.setCategory(.playAndRecord, mode: .videoChat, options: .mixWithOthers)
        XCTAssertEqual(session.categoryOptions, [.mixWithOthers, .allowBluetooth, .defaultToSpeaker])
        XCTAssertTrue(session.isMixable)
        XCTAssertThrowsError(try session.setCategory(.playback, mode: .voiceChat)) { error in
            XCTAssertEqual((error as? AudioSessionError)?.sessionCode, .incompatibleCategory)
        }
        // A refused change leaves the session as it was.
        XCTAssertEqual(session.mode, .videoChat)
    }

    func testErrorCodesAreAVAudioSessionsFourCharacterCodes() {
        let expected: [(AudioSessionError.Code, Int, String)] = [
            (.mediaServicesFailed, 0x6D73_7276, "msrv"), (.isBusy, 0x2161_6374, "!act"),
            (.incompatibleCategory, 0x2163_6174, "!cat"), (.cannotInterruptOthers, 0x2169_6E74, "!int"),
            (.missingEntitlement, 0x656E_743F, "ent?"), (.cannotStartPlaying, 0x2170_6C61, "!pla"),
            (.cannotStartRecording, 0x2172_6563, "!rec"), (.badParam, -50, "-50"),
            (.insufficientPriority, 0x2170_7269, "!pri"), (.resourceNotAvailable, 0x2172_6573, "!res"),
            (.unspecified, 0x7768_6174, "what"), (.siriIsRecording, 0x7369_7269, "siri"), (.none, 0, "0"),
        ]
        XCTAssertEqual(expected.count, AudioSessionError.Code.allCases.count)
        for (code, value, text) in expected {
            XCTAssertEqual(code.rawValue, value)
            XCTAssertEqual(code.fourCharacterCode, text)
        }
    }

    private func parse(_ field: String) throws -> CategoryOptions {
        guard field != "-" else { return [] }
        return try field.split(separator: ",").reduce(into: CategoryOptions()) { options, name in
            options.formUnion(try XCTUnwrap(CategoryOptions(name: String(name)), String(name)))
        }
    }
}
