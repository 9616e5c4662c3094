import Foundation
import XCTest

/// The EBU Tech 3341 / 3342 test signals, generated from the specifications
/// into `Fixtures/ebu` by `scripts/make-ebu-signals.py` (once; the folder is not
/// committed), with what each must read.
public enum EBUSignals {
    public struct Signal {
        public let name: String
        public let path: String
        public let channels: Int
        public let integrated: Double?
        public let momentary: Double?
        public let shortTerm: Double?
        public let lra: Double?
        public let truePeak: Double?
        public let layout: String?
    }

    public static let folder: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Fixtures/ebu").path
    }()

    /// Generates the signals if they are not there yet (or older than the
    /// script), and lists them.
    public static func all() throws -> [Signal] {
        let index = "\(folder)/index.json"
        let script = URL(fileURLWithPath: folder).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/make-ebu-signals.py").path
        func modified(_ path: String) -> Date? {
            (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        }
        if (modified(index) ?? .distantPast) < (modified(script) ?? .distantFuture) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script, folder]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw XCTSkip("could not generate the EBU signals") }
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: index))
        let entries = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: [String: Any]])
        return entries.keys.sorted().map { name in
            let entry = entries[name]!
            return Signal(name: name, path: "\(folder)/\(name).wav", channels: entry["channels"] as! Int,
                          integrated: entry["integrated"] as? Double, momentary: entry["momentary"] as? Double,
                          shortTerm: entry["short_term"] as? Double, lra: entry["lra"] as? Double,
                          truePeak: entry["true_peak"] as? Double, layout: entry["layout"] as? String)
        }
    }
}
