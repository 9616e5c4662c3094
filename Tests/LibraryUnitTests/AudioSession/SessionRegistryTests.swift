@testable import JackAudioSession
import Foundation
import Synchronization
import XCTest

/// The session registry on its own, no jackd: files, locks, inotify, and a
/// real process killed with SIGKILL while it holds its file.
final class SessionRegistryTests: XCTestCase {
    var base: String!

    override func setUp() {
        super.setUp()
        base = NSTemporaryDirectory() + "/registry-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(base, 0o700), 0)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: base)
        super.tearDown()
    }

    func testServerNamesBecomeDistinctFolderNamesThatStayInside() {
        XCTAssertEqual(SessionRegistry.folderName(forServer: "default"), "default")
        XCTAssertEqual(SessionRegistry.folderName(forServer: "studio-2.b_c"), "studio-2.b_c")
        XCTAssertEqual(SessionRegistry.folderName(forServer: "a/b"), "a%2Fb")
        XCTAssertEqual(SessionRegistry.folderName(forServer: "a%2Fb"), "a%252Fb")
        XCTAssertEqual(SessionRegistry.folderName(forServer: ".."), "%2E.")
        XCTAssertEqual(SessionRegistry.folderName(forServer: ""), "%")
        XCTAssertEqual(SessionRegistry.folderName(forServer: "é"), "%C3%A9")
        let names = ["x", "x/", "x.", ".x", "x%2F"].map(SessionRegistry.folderName(forServer:))
        XCTAssertEqual(Set(names).count, names.count, "\(names)")
        XCTAssertFalse(names.contains { $0.contains("/") })
    }

    func testTwoServersNeverShareAFolderAndARestartedOneFindsItsOwn() {
        let first = SessionRegistry(serverName: "one", base: base)
        let entry = RegistryEntry(registry: first)
        XCTAssertNoThrow(try entry.publish("state of one"))
        XCTAssertEqual(SessionRegistry(serverName: "one", base: base).liveRecords()?.map(\.text), ["state of one"])
        XCTAssertEqual(SessionRegistry(serverName: "two", base: base).liveRecords()?.count, 0)
    }

    func testAPublishedStateIsReadUntilWithdrawnAndAReplacementIsReadWhole() throws {
        let registry = SessionRegistry(serverName: "s", base: base)
        let entry = RegistryEntry(registry: registry)
        try entry.publish("first")
        try entry.publish("second, longer")
        XCTAssertEqual(registry.liveRecords(), [SessionRegistry.Record(file: entry.file, text: "second, longer")])
        entry.withdraw()
        XCTAssertEqual(registry.liveRecords()?.count, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: registry.directory + "/" + entry.file))
    }

    func testAReaderNeverSeesAPartialMissingOrSecondStateWhileTheWriterReplacesIt() throws {
        let registry = SessionRegistry(serverName: "s", base: base)
        let entry = RegistryEntry(registry: registry)
        let texts = [String(repeating: "a", count: 3000), "b"]
        try entry.publish(texts[0])
        let stop = Atomic<Bool>(false)
        let writer = Thread {
            var index = 0
            while !stop.load(ordering: .relaxed) {
                index += 1
                try? entry.publish(texts[index % 2])
            }
        }
        writer.start()
        var seen: [String: Int] = [:]
        for _ in 0..<3000 {
            // Unreadable for the moment (replaced at every look) is allowed; a live session left out is not.
            guard let records = registry.liveRecords() else {
                seen["unreadable", default: 0] += 1
                continue
            }
            let key = records.count == 1 && texts.contains(records[0].text) ? records[0].text.prefix(1).description
                : "wrong: \(records.map { $0.text.prefix(20) })"
            seen[key, default: 0] += 1
        }
        stop.store(true, ordering: .relaxed)
        XCTAssertEqual(Set(seen.keys).subtracting(["unreadable"]), ["a", "b"], "\(seen)")
        XCTAssertLessThan(seen["unreadable", default: 0], 30, "\(seen)")
    }

    func testAFileReplacedAtEveryLookIsUnreadableNeverLeftOut() throws {
        // Beside a busy core the reader above once found the file replaced at each of its (then four)
        // looks and left the live session out. Here the writer replaces it between every open and lock.
        let registry = SessionRegistry(serverName: "s", base: base)
        let entry = RegistryEntry(registry: registry)
        try entry.publish("first")
        let path = registry.directory + "/" + entry.file
        var replacements = 0
        let reading = registry.readIfLive(entry.file) {
            replacements += 1
            try? entry.publish("again \(replacements)")
        }
        XCTAssertEqual(reading, .replacedWhileRead)
        XCTAssertEqual(replacements, SessionRegistry.readAttempts)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "the live session's file was removed")
        XCTAssertEqual(registry.readIfLive(entry.file), .live("again \(replacements)"))
        // The folder as a whole: unreadable for now, never a list without the live session.
        XCTAssertNil(registry.liveRecords { try? entry.publish("more") })
        XCTAssertEqual(registry.liveRecords()?.map(\.text), ["more"])
    }

    func testAFileNobodyHoldsIsADeadSessionAndIsRemoved() throws {
        let registry = SessionRegistry(serverName: "s", base: base)
        try registry.prepare()
        let path = registry.directory + "/4242-1.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("left by a dead process".utf8)))
        XCTAssertEqual(registry.liveRecords()?.count, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testAbandonedHalfWrittenFilesGoAndFreshOnesStay() throws {
        let registry = SessionRegistry(serverName: "s", base: base)
        try registry.prepare()
        let old = registry.directory + "/.writing-1-1.json", fresh = registry.directory + "/.writing-2-1.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: old, contents: Data("half".utf8)))
        XCTAssertTrue(FileManager.default.createFile(atPath: fresh, contents: Data("half".utf8)))
        var times = [timeval(tv_sec: time(nil) - 60, tv_usec: 0), timeval(tv_sec: time(nil) - 60, tv_usec: 0)]
        XCTAssertEqual(utimes(old, &times), 0)
        XCTAssertEqual(registry.liveRecords()?.count, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: old))
        XCTAssertTrue(FileManager.default.fileExists(atPath: fresh))
    }

    func testABaseFolderOthersCouldWriteIsRefusedWithItsPath() throws {
        let shared = base + "/shared"
        XCTAssertEqual(mkdir(shared, 0o700), 0)
        XCTAssertEqual(chmod(shared, 0o777), 0)
        let entry = RegistryEntry(registry: SessionRegistry(serverName: "s", base: shared))
        XCTAssertThrowsError(try entry.publish("x")) { error in
            XCTAssertTrue("\(error)".contains(shared) && "\(error)".contains("not private"), "\(error)")
        }
    }

    /// A process that opens a state file for writing, locks it as a session
    /// does, says "ready", and sleeps (the shell replaced by sleep keeps the file).
    func holder(of path: String) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", #"exec 3>>"$0" && flock -x 3 && echo ready && exec sleep 60"#, path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        XCTAssertEqual(String(decoding: output.fileHandleForReading.readData(ofLength: 6), as: UTF8.self), "ready\n")
        return (process, output)
    }

    func testASessionKilledWithSIGKILLWakesTheWatchersAndIsGoneAtOnce() throws {
        let registry = SessionRegistry(serverName: "s", base: base)
        try registry.prepare()
        let path = registry.directory + "/\(UInt32.random(in: 1...UInt32.max))-1.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("alive".utf8)))
        let (process, _) = try holder(of: path)
        XCTAssertEqual(registry.liveRecords()?.map(\.text), ["alive"])

        let queue = DispatchQueue(label: "watch")
        let woken = Atomic<UInt64>(0)
        let watch = RegistryWatch(registry: registry, ownFile: "mine.json", queue: queue) {
            _ = woken.compareExchange(expected: 0, desired: DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
        }
        XCTAssertTrue(watch.isWatching)
        let killedAt = DispatchTime.now().uptimeNanoseconds
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let deadline = ContinuousClock.now + .seconds(2)
        while woken.load(ordering: .relaxed) == 0 && ContinuousClock.now < deadline { usleep(1000) }
        let delay = Double(woken.load(ordering: .relaxed) &- killedAt) / 1e6
        print("registry watch woken \(String(format: "%.2f", delay)) ms after the SIGKILL")
        XCTAssertGreaterThan(woken.load(ordering: .relaxed), 0, "no wake-up after the holder died")
        XCTAssertLessThan(delay, 100)
        XCTAssertEqual(registry.liveRecords()?.count, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testTheSessionsOwnChangesDoNotWakeIt() throws {
        let registry = SessionRegistry(serverName: "s", base: base)
        let entry = RegistryEntry(registry: registry)
        let queue = DispatchQueue(label: "watch")
        let wakes = Atomic<Int>(0)
        let watch = RegistryWatch(registry: registry, ownFile: entry.file, queue: queue) { wakes.add(1, ordering: .relaxed) }
        XCTAssertTrue(watch.isWatching)
        for index in 0..<20 { try entry.publish("state \(index)") }
        entry.withdraw()
        usleep(100_000)
        queue.sync {}
        XCTAssertEqual(wakes.load(ordering: .relaxed), 0)
        // Another session's publish does wake it.
        let other = RegistryEntry(registry: registry)
        try other.publish("other")
        let deadline = ContinuousClock.now + .seconds(2)
        while wakes.load(ordering: .relaxed) == 0 && ContinuousClock.now < deadline { usleep(1000) }
        XCTAssertGreaterThan(wakes.load(ordering: .relaxed), 0)
    }

    func testFilesThatAreNoStatesAreSkippedWithoutBlocking() throws {
        let registry = SessionRegistry(serverName: "s", base: base)
        try registry.prepare()
        XCTAssertEqual(mkfifo(registry.directory + "/fifo.json", 0o600), 0)
        XCTAssertEqual(symlink("/dev/zero", registry.directory + "/link.json"), 0)
        XCTAssertEqual(mkdir(registry.directory + "/folder.json", 0o700), 0)
        let big = registry.directory + "/big.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: Data(repeating: 0x7B, count: 100_000)))
        let (holder, _) = try holder(of: big)
        defer { kill(holder.processIdentifier, SIGKILL) }
        let records = registry.liveRecords() ?? []
        XCTAssertEqual(records.map(\.file), ["big.json"])
        XCTAssertEqual(records.first?.text.utf8.count, SessionState.maximumLength + 1, "read past the bound")
        guard case .failure(.tooLong) = SessionState.parse(records.first?.text ?? "") else {
            return XCTFail("an over-long state was not refused as such")
        }
    }
}
