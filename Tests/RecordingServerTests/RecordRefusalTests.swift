import Foundation
import JackTestSupport
import Recording
import XCTest

/// Every bad input is refused before recording starts, with a message that
/// names what is wrong and what to do, exit status 2, no file and no client left.
final class RecordRefusalTests: JackTestCase {
    func testBadInputsAreRefusedBeforeAnythingStarts() throws {
        let server = try startServer(loopbackChannels: 12, period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = "\(folder)/pipe.wav"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let output = "\(folder)/take.wav"
        let base = ["record", "--server", server.name]
        let cases: [(arguments: [String], says: [String])] = [
            (["--ports", "nothing:*", "--output", output], ["no capture port matches 'nothing:*'", server.name,
                                                           "loopback:capture_1"]),
            (["--output", "\(folder)/missing/take.wav"], ["the folder", "does not exist"]),
            (["--output", folder], ["it is a folder"]),
            (["--output", output, "--for", "3e7"], ["not enough space", "(shorten --for)"]),
            (["--ports", "loopback:capture_*", "--output", "\(folder)/take.flac"], ["at most 8 channels", "(--per-channel, or --format rf64 or w64)"]),
            (["--output", "\(folder)/take.flac", "--bits", "float"], ["FLAC stores 16- or 24-bit", "(--bits 16 or 24"]),
            (["--output", output, "--bits", "12"], ["'12' is invalid for '--bits", "'16', '24', '32' or 'float'"]),
            (["--output", output, "--format", "mp3"], ["'mp3' is invalid for '--format", "'wav', 'rf64', 'w64' or 'flac'"]),
            (["--output", fifo], ["is a FIFO", "(--format flac"]),
            (["--ports", "loopback:capture_*", "--channels", "20", "--output", output], ["--channels 20", "12 port(s)"]),
            // Without --ports, the physical capture ports: asking for more is refused, not cut down.
            (["--channels", "20", "--output", output], ["--channels 20", "system:capture_1"]),
            (["--output", output, "--trigger", "loud"], ["--trigger must be a level below 0 dBFS", "'loud'"]),
            (["--output", output, "--silence-threshold", "3"], ["--silence-threshold must be a level below 0 dBFS"]),
            (["--output", output, "--silence-hold", "forever"], ["--silence-hold must be a duration", "'forever'"]),
            (["--output", output, "--on-silence", " "], ["the command run on silence is empty", "(--on-silence)"]),
            (["--output", output, "--buffer", "0"], ["--buffer must be 0.1 to 600 seconds"]),
        ]
        for (arguments, phrases) in cases {
            let started = Date()
            let result = try run([jas] + base + arguments)
            XCTAssertNotEqual(result.status, 0, "\(arguments): \(result.output)")
            for phrase in phrases {
                XCTAssertTrue(result.output.contains(phrase), "\(arguments) should say '\(phrase)': \(result.output)")
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 5)
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(arguments) left \(output)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: "\(folder)/take.flac"))
        }
        let noServer = try run([jas, "record", "--server", "no-such-server-\(getpid())", "--output", output])
        XCTAssertEqual(noServer.status, 2)
        XCTAssertTrue(noServer.output.contains("no JACK server named 'no-such-server-\(getpid())' is running"), noServer.output)
        XCTAssertTrue(noServer.output.contains("(--server NAME)"), "jas says which flag names another: \(noServer.output)")
        // Nothing of the refused recorders stayed on the server.
        let clients = try run(["jack_lsp", "-s", server.name])
        XCTAssertFalse(clients.output.contains("jas-record"), clients.output)
    }

    /// A library caller gets the refusal as a typed case to switch on, in
    /// words that name the setting, never a flag of jas's.
    func testTheLibraryRefusesWithTypedErrorsThatNameNoFlag() throws {
        let server = try startServer(loopbackChannels: 12, period: 256)
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(folder)/exists.wav", contents: Data()))
        func refusal(_ change: (inout Recorder.Configuration) -> Void) -> RecordingError? {
            var configuration = Recorder.Configuration(outputPath: "\(folder)/take.wav")
            configuration.serverName = server.name
            change(&configuration)
            let recorder = Recorder(configuration: configuration)
            defer { recorder.stop(reason: "test over") }
            do {
                try recorder.prepare()
                return nil
            } catch {
                XCTAssertFalse(error.description.contains("--"), "a flag named by the library: \(error)")
                return error
            }
        }
        XCTAssertEqual(refusal { $0.rotateSeconds = 0 }, .invalidSetting(.rotation, reason: "must be 1 to 31536000 (a year) seconds, not 0.0"))
        XCTAssertEqual(refusal { $0.bufferSeconds = 0.05 }, .invalidSetting(.buffer, reason: "must be 0.1 to 600 seconds, not 0.05"))
        XCTAssertEqual(refusal { $0.onSignal = " " }, .invalidSetting(.onSignal, reason: "is empty; give a command, e.g. 'logger dead air'"))
        XCTAssertEqual(refusal { $0.prerollSeconds = 2 },
                       .invalidSetting(.preroll, reason: "needs a start that comes later: a trigger or a start command"))
        XCTAssertEqual(refusal { $0.outputPath = "\(folder)/exists.wav" }, .outputExists(path: "\(folder)/exists.wav", isSymbolicLink: false))
        XCTAssertEqual(refusal { $0.format = RecordingFormat(container: .flac, sampleFormat: .float32); $0.outputPath = "\(folder)/t.flac" },
                       .formatCannotHoldSamples(RecordingFormat(container: .flac, sampleFormat: .float32)))
        XCTAssertEqual(refusal { $0.portPatterns = ["loopback:capture_*"]; $0.format = RecordingFormat(container: .flac, sampleFormat: .int24)
                                 $0.outputPath = "\(folder)/t.flac" },
                       .tooManyChannels(.flac, channels: 12))
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(folder)/take.wav"))
    }
}
