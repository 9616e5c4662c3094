import Foundation

/// The events of a recording's sidecar log (`take.log`: JSON Lines).
public func logEvents(_ path: String) -> [[String: Any]] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

/// The frames of a take that its log's `gap` events say are silence the recorder wrote.
public func gapRanges(_ events: [[String: Any]]) -> [Range<Int>] {
    events.compactMap { event in
        guard event["event"] as? String == "gap", let at = event["at_frame"] as? Int, let frames = event["frames"] as? Int
        else { return nil }
        return at..<(at + frames)
    }
}
